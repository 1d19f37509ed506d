package cookie_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/cookie"
	"github.com/guide/guide/internal/watch"
)

// realDir is a temporary directory with its symbolic links resolved, as a watcher's root.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCookieComesAfterEveryEarlierChange: a cookie is delivered at once, without waiting
// for the tree to settle, in a batch that holds (or follows one that held) every change
// made before it; Sync returns the sequence the indexer says covers them, and the cookie
// file is gone by then.
func TestCookieComesAfterEveryEarlierChange(t *testing.T) {
	root := realDir(t)
	jar := cookie.New(root)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := make(chan watch.Batch, 16)
	ready := make(chan struct{})
	// Settle long: only a cookie delivers a batch before then.
	w := &watch.Watcher{Root: root, Ready: ready, Cookies: jar, Settle: time.Hour, MaxDelay: time.Hour}
	go func() { _ = w.Run(ctx, out) }()
	<-ready
	for round := range 20 {
		var want []string
		for i := range 1 + round%3 {
			name := fmt.Sprintf("d%d-%d.md", round, i)
			if err := os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			want = append(want, name)
		}
		synced := make(chan error, 1)
		var seq uint64
		go func() {
			var err error
			seq, err = jar.Sync(ctx)
			synced <- err
		}()
		var seen []string
		for b := range out {
			seen = append(seen, b.Paths...)
			if len(b.Cookies) > 0 {
				for _, c := range b.Cookies {
					if strings.HasPrefix(c, cookie.RootPrefix) && slices.Contains(seen, c) {
						t.Fatalf("the cookie %s is delivered as a changed path", c)
					}
				}
				jar.Seen(b.Cookies, uint64(100+round))
				break
			}
		}
		for _, name := range want {
			if !slices.Contains(seen, name) {
				t.Fatalf("round %d: the cookie came before %s was delivered (delivered %v)", round, name, seen)
			}
		}
		if err := <-synced; err != nil || seq != uint64(100+round) {
			t.Fatalf("round %d: Sync = %d, %v; want %d", round, seq, err, 100+round)
		}
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), cookie.RootPrefix) {
				t.Fatalf("round %d: the cookie %s is still there once seen", round, e.Name())
			}
		}
	}
}

// TestSyncFailsOnceTheWatcherStops: calls waiting on a cookie, and every call after, fail
// at once once the jar is closed (the watcher stopped), rather than wait out their bound.
func TestSyncFailsOnceTheWatcherStops(t *testing.T) {
	jar := cookie.New(realDir(t))
	jar.Watching() // nobody delivers
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waiting := make(chan error, 1)
	go func() { _, err := jar.Sync(ctx); waiting <- err }()
	jar.Close()
	if err := <-waiting; !errors.Is(err, cookie.ErrClosed) {
		t.Fatalf("a call waiting when the watcher stopped: %v, want ErrClosed", err)
	}
	if _, err := jar.Sync(ctx); !errors.Is(err, cookie.ErrClosed) {
		t.Fatalf("a call after the watcher stopped: %v, want ErrClosed", err)
	}
}

// TestCookiesGoIntoTheRepository: in a work tree of a git repository, at its top or in a
// folder below it, cookies go into the repository folder, which git never lists; elsewhere
// at the root, under the hidden name the indexer leaves out. Cookies of a process no longer
// running are removed; a running one's stay.
func TestCookiesGoIntoTheRepository(t *testing.T) {
	plain := realDir(t)
	if got := cookie.New(plain).Dir(); got != plain {
		t.Errorf("outside a repository, cookies go into %s, want the root %s", got, plain)
	}
	if !cookie.Stray(cookie.RootPrefix+"1-2") || !cookie.Stray("docs/"+cookie.RootPrefix+"1-2") || cookie.Stray("guide-cookie-1-2") || cookie.Stray("docs/guide-cookie-1-2") {
		t.Error("Stray: a file with the hidden prefix, at any level, is a cookie left at a root; nothing else is")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	top := realDir(t)
	if out, err := exec.Command("git", "-C", top, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	sub := filepath.Join(top, "docs", "guides")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(top, ".git")
	dead := filepath.Join(gitDir, "guide-cookie-999999999-1") // no such pid
	live := filepath.Join(gitDir, fmt.Sprintf("guide-cookie-%d-1", os.Getppid()))
	for _, f := range []string{dead, live} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, root := range []string{top, sub} {
		if got := cookie.New(root).Dir(); got != gitDir {
			t.Errorf("root %s: cookies go into %s, want %s", root, got, gitDir)
		}
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a cookie of a process no longer running is left: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a cookie of a running process was removed: %v", err)
	}
}
