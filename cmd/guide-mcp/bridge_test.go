package main

import (
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/guide/guide/internal/bridge"
	"github.com/guide/guide/internal/testkit"
)

// exeOf returns the program a process runs, by the name of its file.
func exeOf(t *testing.T, pid int) string {
	t.Helper()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	testkit.NoErr(t, err, "read the process's program")
	return filepath.Base(exe)
}

// TestStdioClientRunsTheBridgeBinary: guide-mcp --root on stdio replaces itself with the
// small bridge binary installed beside it, which answers through the owner it started —
// guide-mcp itself, as the owner daemon.
func TestStdioClientRunsTheBridgeBinary(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	c := bridgedClient(t, root, data)
	testkit.WaitCaughtUp(t, c)
	testkit.RequireMatchesDisk(t, c, root)
	testkit.Equal(t, exeOf(t, c.cmd.Process.Pid), bridge.Binary, "the client's process runs")
	testkit.Equal(t, exeOf(t, oneOwner(t, data)), "guide-mcp", "the owner daemon runs")
}

// TestStdioClientWithoutTheBridgeBinary: a guide-mcp installed alone bridges in its own
// process, and still starts the owner and answers.
func TestStdioClientWithoutTheBridgeBinary(t *testing.T) {
	alone := filepath.Join(t.TempDir(), "guide-mcp")
	copyFile(t, filepath.Join(binDir, "guide-mcp"), alone, 0o755)
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	c := bridgedClientOf(t, alone, root, data)
	testkit.WaitCaughtUp(t, c)
	testkit.RequireMatchesDisk(t, c, root)
	testkit.Equal(t, exeOf(t, c.cmd.Process.Pid), "guide-mcp", "the client's process runs")
	testkit.Equal(t, exeOf(t, oneOwner(t, data)), "guide-mcp", "the owner daemon runs")
}

// TestBridgeBinaryLinksNoModule: the bridge binary links the standard library and this
// module only — no search index, NATS server or MCP library, whose code and start-up would
// be paid by every client.
func TestBridgeBinaryLinksNoModule(t *testing.T) {
	info, err := buildinfo.ReadFile(filepath.Join(binDir, bridge.Binary))
	testkit.NoErr(t, err, "read the bridge binary's build information")
	for _, d := range info.Deps {
		t.Errorf("the bridge binary links the module %s %s", d.Path, d.Version)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	testkit.NoErr(t, err, "open")
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	testkit.NoErr(t, err, "create")
	_, err = io.Copy(dst, src)
	testkit.NoErr(t, err, "copy")
	testkit.NoErr(t, dst.Close(), "close")
}
