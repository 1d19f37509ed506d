package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// TestCPUProfileWrittenOnExit: --cpuprofile writes a CPU profile of the process's life,
// ended when it stops on SIGTERM.
func TestCPUProfileWrittenOnExit(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	cmd := exec.Command(filepath.Join(binDir, "guide-mcp"), "--root", root, "--data", t.TempDir(),
		"--http", "127.0.0.1:0", "--cpuprofile", prof)
	stderr, err := cmd.StderrPipe()
	testkit.NoErr(t, err, "stderr")
	testkit.NoErr(t, cmd.Start(), "start")
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.Contains(lines.Text(), "serving MCP") {
	}
	testkit.NoErr(t, cmd.Process.Signal(syscall.SIGTERM), "SIGTERM")
	go func() {
		for lines.Scan() {
		}
	}()
	testkit.NoErr(t, cmd.Wait(), "exit")
	b, err := os.ReadFile(prof)
	testkit.NoErr(t, err, "the profile")
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) { // pprof's format is gzipped
		t.Fatalf("the profile is %d bytes, not gzipped: %.20q", len(b), b)
	}
}
