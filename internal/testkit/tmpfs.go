package testkit

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TmpfsEnv, set to "required" (CI runs as root and sets it), makes a test that cannot
// mount a tmpfs fail rather than skip.
const TmpfsEnv = "GUIDE_TEST_TMPFS"

// Tmpfs mounts a tmpfs of size (as mount's size option takes it: "4m") on a new temporary
// folder, unmounted when the test ends, and returns the folder and a function that
// resizes it (a full disk given space back). Mounting needs root (or CAP_SYS_ADMIN): the
// test is skipped without it, unless $GUIDE_TEST_TMPFS is "required".
func Tmpfs(t testing.TB, size string) (dir string, resize func(size string)) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		if os.Getenv(TmpfsEnv) == "required" {
			t.Fatalf("mount a tmpfs (needed as $%s is required): %v", TmpfsEnv, err)
		}
		t.Skipf("cannot mount a tmpfs here (run as root, as CI does): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir, func(size string) {
		t.Helper()
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, "size="+size+",mode=0700"); err != nil {
			t.Fatalf("resize the tmpfs to %s: %v", size, err)
		}
	}
}
