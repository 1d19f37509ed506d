package oracle_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/testkit/oracle"
)

// maxSize is the size limit the fixture's indexer runs with.
const maxSize = 200

// fixture writes a tree holding one of every kind of entry the indexer has a rule for,
// and returns it with the documents the indexer publishes for it.
func fixture(t *testing.T) (root string, want map[string]oracle.Doc) {
	t.Helper()
	dir := t.TempDir()
	root, outside := filepath.Join(dir, "root"), filepath.Join(dir, "outside")
	ok := func(content string) oracle.Doc { return oracle.Doc{Status: events.StatusOK, Content: content} }
	want = map[string]oracle.Doc{}
	write := func(rel, content string, doc *oracle.Doc) {
		testkit.WriteFile(t, root, rel, content)
		if doc != nil {
			want[rel] = *doc
		}
	}
	doc := func(d oracle.Doc) *oracle.Doc { return &d }

	write("a.md", "# Alpha\n\nalpha words", doc(ok("# Alpha\n\nalpha words")))
	write("sub/b.md", "# Beta\n\nbeta words", doc(ok("# Beta\n\nbeta words")))
	write("card.md.mustache", "Hello {{name}}, welcome aboard", doc(ok("Hello {{name}}, welcome aboard")))
	write("blob.bin", "abc\x00def", doc(oracle.Doc{Status: events.StatusBinary, Content: "abc\x00def"}))
	write("latin.md", "caf\xe9 au lait", doc(oracle.Doc{Status: events.StatusInvalidUTF8, Content: "caf\xe9 au lait"}))
	big := strings.Repeat("large words ", 20)
	write("big.md", big, doc(oracle.Doc{Status: events.StatusTooLarge, Content: big}))
	// Left out by the rules, and the rules themselves.
	write(".guideignore", "drafts/\n", nil)
	write("drafts/skip.md", "# Draft", nil)
	write("notes.tmp", "scratch", nil) // a built-in rule
	write("sub/.gitignore", "hidden.md\n", nil)
	write("sub/hidden.md", "# Hidden", nil)
	write("guide.yaml", "categories:\n  notes:\n    dir: sub\n    description: Notes\n", nil)
	write("bad\xffname.md", "# Bad name", nil)
	write("bad\xfedir/inner.md", "# Inside a badly named folder", nil)
	testkit.NoErr(t, syscall.Mkfifo(filepath.Join(root, "pipe.md"), 0o644), "mkfifo")
	// A path too long for a subject: listed under its stand-in.
	long := strings.Repeat(strings.Repeat("文", 80)+"/", 5) + "deep.md"
	write(long, "# Deep\n\ndown there", nil)
	want[events.StandIn(long)] = oracle.Doc{Status: events.StatusPathTooLong}

	testkit.WriteFile(t, outside, "far.md", "far away")
	for link, target := range map[string]string{
		"inside.md":  "a.md",                                   // a document with a.md's bytes
		"abs.md":     filepath.Join(root, "sub", "b.md"),       // an absolute link inside the root
		"sub/up.md":  "../a.md",                                // a link inside a folder
		"outside.md": filepath.Join(outside, "far.md"),         // listed, never read
		"away":       outside,                                  // a folder outside: listed, never read
		"broken.md":  "gone.md",                                // listed as unreadable
		"shortcut":   "sub",                                    // a folder inside: not a document
		"hop.md":     "abs.md",                                 // relative, through an absolute link
		"piped.md":   "pipe.md",                                // a link to a pipe: not a document
		"skipped.md": filepath.Join(root, "drafts", "skip.md"), // to an ignored file: a document still
	} {
		testkit.NoErr(t, os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))), "ln -s "+link)
	}
	want["inside.md"] = ok("# Alpha\n\nalpha words")
	want["abs.md"] = ok("# Beta\n\nbeta words")
	want["sub/up.md"] = ok("# Alpha\n\nalpha words")
	want["outside.md"] = oracle.Doc{Status: events.StatusOutsideRoot}
	want["away"] = oracle.Doc{Status: events.StatusOutsideRoot}
	want["broken.md"] = oracle.Doc{Status: events.StatusUnreadable}
	// A link is followed through the root however each step is written.
	want["hop.md"] = ok("# Beta\n\nbeta words")
	want["skipped.md"] = ok("# Draft")

	if os.Geteuid() != 0 { // root reads every file
		write("locked.md", "# Locked", doc(oracle.Doc{Status: events.StatusUnreadable}))
		testkit.NoErr(t, os.Chmod(filepath.Join(root, "locked.md"), 0), "chmod")
	}
	return root, want
}

// The disk is read by the indexer's rules: ignore rules, names, links, pipes, statuses and
// stand-ins.
func TestDisk(t *testing.T) {
	root, want := fixture(t)
	got, err := oracle.Disk(root, oracle.Options{Project: "test", MaxSize: maxSize})
	testkit.NoErr(t, err, "disk")
	testkit.Equal(t, got, want, "documents")

	t.Run("RootThroughALink", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "link")
		testkit.NoErr(t, os.Symlink(root, link), "ln -s root")
		got, err := oracle.Disk(link, oracle.Options{Project: "test", MaxSize: maxSize})
		testkit.NoErr(t, err, "disk")
		testkit.Equal(t, got, want, "documents")
	})
	t.Run("NoSizeLimit", func(t *testing.T) {
		got, err := oracle.Disk(root, oracle.Options{Project: "test"})
		testkit.NoErr(t, err, "disk")
		testkit.Equal(t, got["big.md"].Status, events.StatusOK, "status of big.md")
	})
}

// What the indexer publishes for the fixture is what Disk says: tree, view and search
// agree with it.
func TestDiskAgreesWithTheIndexer(t *testing.T) {
	root, _ := fixture(t)
	p := testkit.NewPipeline(t, nil, root, "")
	p.Indexer.MaxSize = maxSize
	p.Reconcile()
	disk, err := oracle.Disk(root, oracle.Options{Project: p.Project, MaxSize: maxSize})
	testkit.NoErr(t, err, "disk")
	d, err := oracle.Compare(testkit.Context(t), p.Client, disk)
	testkit.NoErr(t, err, "compare")
	if !d.Empty() {
		t.Fatalf("the indexer and the disk oracle disagree: %s (%+v)", d, d)
	}
}

// Compare reports each kind of difference.
func TestCompare(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFile(t, root, "a.md", "# Alpha\n\nalpha words")
	testkit.WriteFile(t, root, "sub/b.md", "# Beta\n\nbeta words")
	testkit.WriteFile(t, root, "blob.bin", "abc\x00def")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	read := func() map[string]oracle.Doc {
		disk, err := oracle.Disk(root, oracle.Options{Project: p.Project})
		testkit.NoErr(t, err, "disk")
		return disk
	}
	compare := func(disk map[string]oracle.Doc) oracle.Diff {
		d, err := oracle.Compare(testkit.Context(t), p.Client, disk)
		testkit.NoErr(t, err, "compare")
		return d
	}
	t.Run("Agree", func(t *testing.T) {
		if d := compare(read()); !d.Empty() || d.String() != "" {
			t.Fatalf("differs: %s", d)
		}
	})
	t.Run("ErrLost", func(t *testing.T) {
		disk := read()
		disk["c.md"] = oracle.Doc{Status: events.StatusOK, Content: "new"}
		d := compare(disk)
		testkit.Equal(t, d.Lost, []string{"c.md"}, "lost")
	})
	t.Run("ErrPhantom", func(t *testing.T) {
		disk := read()
		delete(disk, "sub/b.md")
		d := compare(disk)
		testkit.Equal(t, d.Phantom, []string{"sub/b.md"}, "phantom")
	})
	t.Run("ErrStaleContent", func(t *testing.T) {
		disk := read()
		disk["a.md"] = oracle.Doc{Status: events.StatusOK, Content: "# Alpha\n\nother words"}
		d := compare(disk)
		testkit.Equal(t, d.Stale, []string{"a.md"}, "stale")
		if !strings.Contains(d.String(), "other words") {
			t.Fatalf("sample %q", d)
		}
	})
	t.Run("ErrStaleStatus", func(t *testing.T) {
		disk := read()
		disk["blob.bin"] = oracle.Doc{Status: events.StatusOK, Content: "abc def"}
		d := compare(disk)
		testkit.Equal(t, d.Stale, []string{"blob.bin"}, "stale")
		testkit.Equal(t, d.Sample, `view("blob.bin") says binary, disk says ok`, "sample")
	})
	t.Run("ErrServedThoughOutside", func(t *testing.T) {
		disk := read()
		disk["a.md"] = oracle.Doc{Status: events.StatusOutsideRoot}
		d := compare(disk)
		testkit.Equal(t, d.Stale, []string{"a.md"}, "stale")
	})
}
