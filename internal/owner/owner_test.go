package owner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/testkit"
)

// holdEnv makes the test binary a process that holds the lock of a directory until killed.
const holdEnv = "GUIDE_OWNER_TEST_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		l, err := Acquire(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		if err := l.Publish(Record{Role: "test"}); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("held")
		select {}
	}
	os.Exit(m.Run())
}

func TestAcquire(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	testkit.NoErr(t, err, "acquire")
	testkit.NoErr(t, l.Publish(Record{Role: "guide-mcp", NATSURL: "nats://127.0.0.1:1"}), "publish")

	t.Run("ErrHeld", func(t *testing.T) {
		_, err := Acquire(dir)
		if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
			t.Fatalf("second acquire: %v, want ErrHeld naming pid %d", err, os.Getpid())
		}
		testkit.Equal(t, Held(dir), true, "held")
		_, err = AcquireWait(testkit.Context(t), dir, 50*time.Millisecond)
		testkit.Equal(t, errors.Is(err, ErrHeld), true, "held after waiting")
		r, err := Await(testkit.Context(t), dir)
		testkit.NoErr(t, err, "await")
		testkit.Equal(t, r.NATSURL, "nats://127.0.0.1:1", "the owner's record")
	})
	t.Run("PrivateFiles", func(t *testing.T) {
		ln, err := l.Listen()
		testkit.NoErr(t, err, "listen")
		defer ln.Close()
		for _, p := range []string{Socket(dir), dir + "/owner.json", dir + "/owner.lock"} {
			st, err := os.Stat(p)
			testkit.NoErr(t, err, "stat")
			if st.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: mode %v, want no access for group and others", p, st.Mode().Perm())
			}
		}
	})
	t.Run("Released", func(t *testing.T) {
		testkit.NoErr(t, l.Release(), "release")
		l2, err := Acquire(dir)
		testkit.NoErr(t, err, "acquire after release")
		_, err = Read(dir)
		testkit.Equal(t, errors.Is(err, os.ErrNotExist), true, "the old owner's record is gone")
		testkit.NoErr(t, l2.Release(), "release")
		_, err = Await(testkit.Context(t), dir)
		testkit.Equal(t, errors.Is(err, ErrNoOwner), true, "no owner")
	})
}

// TestLockOfKilledOwnerTakenOver: a process that held the lock is killed with SIGKILL; its
// lock file and record are left behind, and the next process owns the directory at once.
func TestLockOfKilledOwnerTakenOver(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	testkit.NoErr(t, err, "pipe")
	testkit.NoErr(t, cmd.Start(), "start the holder")
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	testkit.Equal(t, line, "held\n", "the holder's word")

	_, err = Acquire(dir)
	testkit.Equal(t, errors.Is(err, ErrHeld), true, "held by the other process")
	testkit.NoErr(t, cmd.Process.Kill(), "kill -9")
	_ = cmd.Wait()
	if _, err := os.Stat(dir + "/owner.json"); err != nil {
		t.Fatalf("the killed owner's record should be left behind: %v", err)
	}
	l, err := Acquire(dir)
	testkit.NoErr(t, err, "acquire the killed owner's lock")
	testkit.NoErr(t, l.Release(), "release")
}

// TestLockLost: a lock whose file was deleted with its directory, or replaced, no longer
// guards anything (another process takes a new lock at once); Lost and Watch say so.
func TestLockLost(t *testing.T) {
	t.Run("DirectoryDeleted", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		l, err := Acquire(dir)
		testkit.NoErr(t, err, "acquire")
		defer l.Release()
		testkit.NoErr(t, l.Lost(), "a held lock")
		testkit.NoErr(t, os.RemoveAll(dir), "rm -rf the data directory")
		second, err := Acquire(dir)
		testkit.NoErr(t, err, "a second process locks the new directory")
		defer second.Release()
		if err := l.Lost(); !errors.Is(err, ErrLost) {
			t.Fatalf("Lost after the directory was deleted: %v, want ErrLost", err)
		}
		if err := l.Watch(testkit.Context(t), time.Millisecond); !errors.Is(err, ErrLost) {
			t.Fatalf("Watch: %v, want ErrLost", err)
		}
		testkit.NoErr(t, second.Lost(), "the second lock holds")
	})
	t.Run("FileReplaced", func(t *testing.T) {
		dir := t.TempDir()
		l, err := Acquire(dir)
		testkit.NoErr(t, err, "acquire")
		defer l.Release()
		testkit.NoErr(t, os.Rename(filepath.Join(dir, "owner.lock"), filepath.Join(dir, "old.lock")), "move the lock file away")
		testkit.NoErr(t, os.WriteFile(filepath.Join(dir, "owner.lock"), nil, 0o600), "a new lock file")
		if err := l.Lost(); !errors.Is(err, ErrLost) {
			t.Fatalf("Lost after the file was replaced: %v, want ErrLost", err)
		}
	})
	t.Run("Released", func(t *testing.T) {
		dir := t.TempDir()
		l, err := Acquire(dir)
		testkit.NoErr(t, err, "acquire")
		testkit.NoErr(t, l.Release(), "release")
		testkit.NoErr(t, l.Lost(), "a released lock has nothing to lose")
		ctx, cancel := context.WithCancel(testkit.Context(t))
		cancel()
		testkit.NoErr(t, l.Watch(ctx, time.Hour), "Watch ends with its context")
	})
}
