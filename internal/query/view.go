package query

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// Limits bound every response.
type Limits struct {
	// MaxChars bounds a response's text, about 25k tokens by default.
	MaxChars int
	// MaxEntries bounds the entries of a listing (view of a folder, tree).
	MaxEntries int
	// MaxDocuments bounds the documents of one content response.
	MaxDocuments int
}

// DefaultLimits are the limits used when none are given.
var DefaultLimits = Limits{MaxChars: 100_000, MaxEntries: 2_000, MaxDocuments: DefaultMaxDocuments}

func (l Limits) orDefault() Limits {
	if l.MaxChars <= 0 {
		l.MaxChars = DefaultLimits.MaxChars
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultLimits.MaxEntries
	}
	if l.MaxDocuments <= 0 {
		l.MaxDocuments = DefaultLimits.MaxDocuments
	}
	return l
}

// DocumentView is what view returns for a document.
type DocumentView struct {
	Type     string        `json:"type"` // "document"
	Path     string        `json:"path"`
	Name     string        `json:"name"`
	Title    string        `json:"title,omitempty"`
	Size     int64         `json:"size"`
	Mtime    time.Time     `json:"mtime"`
	Words    int           `json:"words"`
	Status   events.Status `json:"status"`
	Reason   string        `json:"reason,omitempty"`
	Template bool          `json:"template,omitempty"`
	Basename string        `json:"basename,omitempty"` // for a template, the name it answers to
	Content  string        `json:"content"`
	// Offset is the character offset of Content in the document, when asked for.
	Offset int `json:"offset,omitempty"`
	// Truncated is set when Content stops before the end; NextOffset is where to go on.
	Truncated  bool   `json:"truncated,omitempty"`
	NextOffset int    `json:"next_offset,omitempty"`
	Chars      int    `json:"chars"` // the document's length in characters
	Message    string `json:"message,omitempty"`
	// Partial, when set, says the content is missing: another partition keeps it, and
	// none of its replicas answered.
	Partial *ContentPartial `json:"partial,omitempty"`
}

// ContentPartial says which documents' content an answer lacks, and the partitions that
// keep them, none of whose replicas answered.
type ContentPartial struct {
	MissingPartitions []int    `json:"missing_partitions"`
	MissingDocuments  []string `json:"missing_documents"`
	Note              string   `json:"note"`
}

// elsewhere collects the documents whose bodies another partition keeps, not to be had.
type elsewhere struct {
	parts map[int]bool
	paths []string
}

// add reports whether err is a body kept elsewhere, and collects it.
func (e *elsewhere) add(err error) bool {
	var ee *projection.ElsewhereError
	if !errors.As(err, &ee) {
		return false
	}
	if e.parts == nil {
		e.parts = map[int]bool{}
	}
	e.parts[ee.Partition] = true
	e.paths = append(e.paths, ee.Path)
	return true
}

// partial is the answer's mark, nil when nothing is missing.
func (e *elsewhere) partial() *ContentPartial {
	if len(e.paths) == 0 {
		return nil
	}
	ks := slices.Sorted(maps.Keys(e.parts))
	return &ContentPartial{MissingPartitions: ks, MissingDocuments: e.paths,
		Note: fmt.Sprintf("partial: the content of %d document(s) is kept by partition %v, and no replica of it answered: %s; ask again in a moment",
			len(e.paths), ks, strings.Join(e.paths, ", "))}
}

// FolderView is what view returns for a folder: its immediate children.
type FolderView struct {
	Type           string        `json:"type"` // "folder"
	Path           string        `json:"path"`
	Name           string        `json:"name"`
	TotalDocuments int           `json:"total_documents"` // at any depth below
	TotalWords     int           `json:"total_words"`     // at any depth below
	Folders        []FolderEntry `json:"folders"`
	Documents      []DocEntry    `json:"documents"` // directly in the folder
	// Offset is the index of the first entry listed (folders first, then documents).
	Offset     int    `json:"offset,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	NextOffset int    `json:"next_offset,omitempty"` // where the next page starts, when truncated
	Message    string `json:"message,omitempty"`
}

// FolderEntry is a subfolder in a listing.
type FolderEntry struct {
	Name           string `json:"name"`
	Path           string `json:"path"`
	TotalDocuments int    `json:"total_documents"`
	TotalWords     int    `json:"total_words"`
}

// DocEntry is a document in a listing: metadata, never content.
type DocEntry struct {
	Name     string        `json:"name"`
	Path     string        `json:"path"`
	Title    string        `json:"title,omitempty"`
	Words    int           `json:"words"`
	Size     int64         `json:"size"`
	Status   events.Status `json:"status,omitempty"` // omitted when ok
	Template bool          `json:"template,omitempty"`
}

func docEntry(d *projection.Document) DocEntry {
	e := DocEntry{Name: d.Name(), Path: d.Path, Title: d.Title, Words: d.Words, Size: d.Size, Template: d.Template()}
	if d.Status != events.StatusOK {
		e.Status = d.Status
	}
	return e
}

// entrySize estimates an entry's share of a JSON response.
func entrySize(name, p, title string) int { return len(name) + len(p) + len(title) + 80 }

// View answers view(path): a document's content and metadata, or a folder's immediate
// children. offset (in characters) pages through a document longer than the limit.
func View(s *projection.Snapshot, rawPath string, offset int, lim Limits) (any, *Error) {
	lim = lim.orDefault()
	p, qerr := CleanPath(rawPath)
	if qerr != nil {
		return nil, qerr
	}
	if offset < 0 {
		return nil, Errorf(ErrInvalidArgument, "offset %d is negative", offset)
	}
	if f, ok := s.Folder(p); ok {
		return viewFolder(f, offset, lim)
	}
	d, ok := s.Document(p)
	var note string
	if !ok {
		var qerr *Error
		if d, qerr = resolve(s, p); qerr != nil {
			return nil, qerr
		}
		note = fmt.Sprintf("%q resolved to %q", p, d.Path)
	}
	return viewDocument(s, d, offset, note, lim)
}

// resolve finds the document a path names without its extension ("Characters/Elara" for
// "Characters/Elara.md") or by its template basename ("doc.md" for "doc.md.mustache").
func resolve(s *projection.Snapshot, p string) (*projection.Document, *Error) {
	dir, name := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	f, ok := s.Folder(dir)
	if !ok {
		return nil, notFound(p)
	}
	var exact, byStem []*projection.Document
	for _, d := range f.Docs() {
		switch {
		case d.Basename() == name:
			exact = append(exact, d)
		case stem(d.Basename()) == name:
			byStem = append(byStem, d)
		}
	}
	pick := exact
	if len(pick) == 0 {
		pick = byStem
	}
	// Where a document and its template both answer, the document wins.
	if len(pick) > 1 {
		plain := slices.DeleteFunc(slices.Clone(pick), (*projection.Document).Template)
		if len(plain) > 0 {
			pick = plain
		}
	}
	switch len(pick) {
	case 0:
		return nil, notFound(p)
	case 1:
		return pick[0], nil
	}
	names := make([]string, len(pick))
	for i, d := range pick {
		names[i] = d.Name()
	}
	return nil, Errorf(ErrNotFound, "%q names %d documents: %s; give the full name", p, len(pick), strings.Join(names, ", ")).
		WithInstruction("Call view again with one of the full names listed.")
}

func stem(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}

func notFound(p string) *Error {
	return Errorf(ErrNotFound, "nothing at %q", p).
		WithInstruction("Check the path with tree or search, then call view again.")
}

func viewFolder(f *projection.Folder, offset int, lim Limits) (*FolderView, *Error) {
	v := &FolderView{Type: "folder", Path: f.Path, Name: f.Name(), TotalDocuments: f.Documents, TotalWords: f.Words,
		Folders: []FolderEntry{}, Documents: []DocEntry{}, Offset: offset}
	folders, docs := f.Folders(), f.Docs()
	total := len(folders) + len(docs)
	if offset > total {
		return nil, Errorf(ErrInvalidArgument, "offset %d is past the end of %q (%d entries)", offset, f.Path, total)
	}
	budget := lim.MaxChars - 200
	i := offset
	for ; i < total; i++ {
		if i-offset >= lim.MaxEntries || budget < 0 {
			v.Truncated = true
			break
		}
		if i < len(folders) {
			c := folders[i]
			v.Folders = append(v.Folders, FolderEntry{Name: c.Name(), Path: c.Path, TotalDocuments: c.Documents, TotalWords: c.Words})
			budget -= entrySize(c.Name(), c.Path, "")
			continue
		}
		d := docs[i-len(folders)]
		v.Documents = append(v.Documents, docEntry(d))
		budget -= entrySize(d.Name(), d.Path, d.Title)
	}
	if v.Truncated {
		v.NextOffset = i
		v.Message = fmt.Sprintf("listing truncated after %d of %d entries; call view with offset %d for the rest, or use search",
			i, total, i)
	}
	return v, nil
}

func viewDocument(s *projection.Snapshot, d *projection.Document, offset int, note string, lim Limits) (*DocumentView, *Error) {
	v := &DocumentView{Type: "document", Path: d.Path, Name: d.Name(), Title: d.Title, Size: d.Size,
		Mtime: d.Mtime, Words: d.Words, Status: d.Status, Reason: d.Reason, Template: d.Template(), Message: note}
	if v.Template {
		v.Basename = d.Basename()
	}
	switch d.Status {
	case events.StatusOK:
	case events.StatusOutsideRoot:
		return nil, Errorf(ErrInvalidPath, "%q is a symbolic link that leaves the project root; it is never followed", d.Path)
	default:
		v.Message = join(v.Message, fmt.Sprintf("no text content: %s (%s)", d.Status, d.Reason))
		return v, nil
	}
	b, err := s.Content(d)
	var gone elsewhere
	if gone.add(err) {
		// The metadata, marked partial: never an error for a partition that is down.
		v.Partial = gone.partial()
		v.Message = join(v.Message, v.Partial.Note)
		return v, nil
	}
	if err != nil {
		return nil, Internal(ErrIO, err, "reading %s", d.Path)
	}
	v.Chars = utf8.RuneCount(b)
	if offset > v.Chars {
		return nil, Errorf(ErrInvalidArgument, "offset %d is past the end of %q (%d characters)", offset, d.Path, v.Chars)
	}
	// Skip offset characters, then take what fits in the budget, on a character boundary.
	start := 0
	for i := 0; i < offset; i++ {
		_, size := utf8.DecodeRune(b[start:])
		start += size
	}
	budget := lim.MaxChars - 500 - len(d.Path) - len(d.Title)
	end := len(b)
	if end-start > budget {
		end = start + budget
		for end > start && !utf8.RuneStart(b[end]) {
			end--
		}
		v.Truncated = true
		v.NextOffset = offset + utf8.RuneCount(b[start:end])
		v.Message = join(v.Message, fmt.Sprintf("content truncated at character %d of %d; call view with offset %d for the rest",
			v.NextOffset, v.Chars, v.NextOffset))
	}
	v.Content = string(b[start:end])
	v.Offset = offset
	return v, nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
