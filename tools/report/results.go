package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
)

// ResultsVersion is the format of the results file; a file of another version is refused.
const ResultsVersion = 1

// Results is the results file (BENCHMARKS.json): the latest record of every area. A run of
// some scenarios replaces the records of the areas it measured and keeps the others, each
// with its own date, machine and command.
type Results struct {
	Version int      `json:"version"`
	Records []Record `json:"records"`
}

// Record is one area's latest run: when, where and how it was measured, the figures the
// targets read (Metrics) and the tables a reader checks them against.
type Record struct {
	Area    string  `json:"area"`
	Date    string  `json:"date"` // "2006-01-02 15:04 UTC"
	Machine Machine `json:"machine"`
	Load    Load    `json:"load"`
	Command string  `json:"command"`
	// Commit is the build measured (git describe), when known.
	Commit string `json:"commit,omitempty"`
	// NotMeasured says why the area has no figures since Date; the record then holds none.
	NotMeasured string            `json:"not_measured,omitempty"`
	Metrics     map[string]Metric `json:"metrics,omitempty"`
	Tables      []Table           `json:"tables,omitempty"`
	Notes       []string          `json:"notes,omitempty"`
}

// Metric is one figure a target can read: a value in a unit, what it is, and a note that
// qualifies it (the run's spread, the sizes it compares). Err, when set, says the figure
// cannot meet any target (errors during the calls, a failed run).
type Metric struct {
	Value float64 `json:"value"`
	Unit  Unit    `json:"unit"`
	What  string  `json:"what,omitempty"`
	Note  string  `json:"note,omitempty"`
	Err   string  `json:"err,omitempty"`
}

// Unit is how a metric's value is read and written.
type Unit string

// The units of metrics.
const (
	UnitSeconds   Unit = "s"
	UnitBytes     Unit = "B"
	UnitTimes     Unit = "x"  // a ratio
	UnitPerSecond Unit = "/s" // a rate
	UnitCount     Unit = "n"
	UnitScore     Unit = "score" // a share, 0 to 1
)

// Format writes a value in the unit, as the tables show it.
func (u Unit) Format(v float64) string {
	switch u {
	case UnitSeconds:
		return FormatDuration(seconds(v))
	case UnitBytes:
		return FormatMB(int64(v))
	case UnitTimes:
		if v >= 100 {
			return fmt.Sprintf("%.0f×", v)
		}
		return fmt.Sprintf("%.2f×", v)
	case UnitPerSecond:
		return fmt.Sprintf("%.0f/s", v)
	case UnitCount:
		return fmt.Sprintf("%.0f", v)
	case UnitScore:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%g", v)
}

// String is the metric as a table cell: its value, then its note.
func (m Metric) String() string {
	if m.Value == 0 && m.Err != "" {
		return m.Err // no figure: the run failed
	}
	s := m.Unit.Format(m.Value)
	if m.Note != "" {
		s += " (" + m.Note + ")"
	}
	if m.Err != "" {
		s += "; " + m.Err
	}
	return s
}

// Table is one table of a record: a title, a paragraph above it, its columns and rows, and
// sentences below it.
type Table struct {
	Title   string     `json:"title,omitempty"`
	About   string     `json:"about,omitempty"`
	Columns []string   `json:"columns,omitempty"`
	Align   string     `json:"align,omitempty"` // per column: l or r; missing ones are l
	Rows    [][]string `json:"rows,omitempty"`
	Notes   []string   `json:"notes,omitempty"`
}

// NewTable starts a table; a column named with a leading ">" is right-aligned.
func NewTable(title string, columns ...string) Table {
	t := Table{Title: title}
	align := make([]byte, len(columns))
	for i, c := range columns {
		align[i] = 'l'
		if len(c) > 1 && c[0] == '>' {
			c, align[i] = c[1:], 'r'
		}
		t.Columns = append(t.Columns, c)
	}
	if bytes.ContainsRune(align, 'r') {
		t.Align = string(align)
	}
	return t
}

// Add appends a row, each cell formatted with %v.
func (t *Table) Add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = fmt.Sprint(c)
	}
	t.Rows = append(t.Rows, row)
}

// Record returns the record of an area, if the results hold one.
func (r *Results) Record(area string) (Record, bool) {
	for _, x := range r.Records {
		if x.Area == area {
			return x, true
		}
	}
	return Record{}, false
}

// Put replaces the record of each given record's area, or adds it; records stay in the
// order of Areas.
func (r *Results) Put(recs ...Record) {
	for _, rec := range recs {
		i := slices.IndexFunc(r.Records, func(x Record) bool { return x.Area == rec.Area })
		if i >= 0 {
			r.Records[i] = rec
		} else {
			r.Records = append(r.Records, rec)
		}
	}
	slices.SortStableFunc(r.Records, func(a, b Record) int { return areaIndex(a.Area) - areaIndex(b.Area) })
}

// ReadResults reads a results file; a file that does not exist is empty results.
func ReadResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Results{Version: ResultsVersion}, nil
	}
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Version != ResultsVersion {
		return nil, fmt.Errorf("%s: results version %d, this harness reads %d", path, r.Version, ResultsVersion)
	}
	return &r, nil
}

// Encode writes the results as the file holds them: indented, with every list of plain
// values (a table's row, its columns) on one line, so that a new run's diff reads row by
// row.
func (r *Results) Encode() ([]byte, error) {
	r.Version = ResultsVersion
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return indentJSON(b), nil
}

// Update puts the records into the results file and renders the whole of the Markdown file
// from it; either path may be "" to leave that file alone. Both are written atomically.
func Update(resultsPath, markdownPath string, recs ...Record) error {
	res := &Results{Version: ResultsVersion}
	if resultsPath != "" {
		var err error
		if res, err = ReadResults(resultsPath); err != nil {
			return err
		}
	}
	res.Put(recs...)
	if resultsPath != "" {
		b, err := res.Encode()
		if err != nil {
			return err
		}
		if err := writeAtomic(resultsPath, b); err != nil {
			return err
		}
	}
	if markdownPath != "" {
		return writeAtomic(markdownPath, []byte(Render(res)))
	}
	return nil
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// indentJSON indents compact JSON two spaces a level, keeping an array that holds no
// object or array on one line.
func indentJSON(src []byte) []byte {
	var out bytes.Buffer
	depth := 0
	newline := func() {
		out.WriteByte('\n')
		for range depth {
			out.WriteString("  ")
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := stringEnd(src, i)
			out.Write(src[i:j])
			i = j - 1
		case '[':
			if j, flat := flatArray(src, i); flat {
				out.Write(src[i:j])
				i = j - 1
				continue
			}
			fallthrough
		case '{':
			out.WriteByte(c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				continue
			}
			depth++
			newline()
		case '}', ']':
			if i > 0 && src[i-1] != '{' && src[i-1] != '[' {
				depth--
				newline()
			}
			out.WriteByte(c)
		case ',':
			out.WriteByte(c)
			newline()
		case ':':
			out.WriteString(": ")
		default:
			out.WriteByte(c)
		}
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// stringEnd is the index just past the JSON string starting at src[i].
func stringEnd(src []byte, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(src)
}

// flatArray reports whether the array starting at src[i] holds no object or array, and
// the index just past it.
func flatArray(src []byte, i int) (int, bool) {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '"':
			j = stringEnd(src, j) - 1
		case '[', '{':
			return 0, false
		case ']':
			return j + 1, true
		}
	}
	return 0, false
}
