//go:build !linux

package testkit

import "testing"

// TmpfsEnv: see tmpfs_linux.go.
const TmpfsEnv = "GUIDE_TEST_TMPFS"

// Tmpfs is Linux only: elsewhere the test is skipped.
func Tmpfs(t testing.TB, size string) (dir string, resize func(size string)) {
	t.Helper()
	t.Skip("a tmpfs is mounted on Linux only")
	return "", nil
}
