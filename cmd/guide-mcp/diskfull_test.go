package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/testkit"
)

// TestDiskFull: the data directory on a 4 MB tmpfs, then 200 files of 20 KB added. While
// the disk is full, /healthz is not ready and says why, and the status and search answers
// carry write_error; once space is given back, every file is indexed, with no restart,
// and a file added later too. (Needs root to mount the tmpfs: CI runs it.)
func TestDiskFull(t *testing.T) {
	data, resize := testkit.Tmpfs(t, "4m")
	root := t.TempDir()
	testkit.WriteFile(t, root, "first.md", "# First\n\nlantern\n")
	m := inProcess(t, "--root", root, "--data", data, "--http", "127.0.0.1:0")
	c := httpClient(t, m)
	testkit.WaitCaughtUp(t, c)
	healthz := "http://" + m.Addr().String() + "/healthz"

	r := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 4000)
	for i := range words {
		var b strings.Builder
		for range 3 + r.IntN(7) {
			b.WriteByte(byte('a' + r.IntN(16)))
		}
		words[i] = b.String()
	}
	for i := range 200 {
		var b strings.Builder
		fmt.Fprintf(&b, "# File %d\n\nunique%d", i, i)
		for range 3000 {
			b.WriteString(" " + words[r.IntN(len(words))])
		}
		testkit.WriteFile(t, root, fmt.Sprintf("f%03d.md", i), b.String())
	}

	t.Run("FullIsAnError", func(t *testing.T) {
		testkit.Eventually(t, time.Minute, func() (bool, string) {
			code, body := get(t, healthz, "")
			return code != 200 && strings.Contains(body, "no space left on device"), fmt.Sprintf("/healthz %d %s", code, body)
		})
		st := testkit.ReadStatus(t, c)
		if !strings.Contains(st.WriteError, "no space left on device") || st.CaughtUp {
			t.Fatalf("status while the disk is full: write_error %q, caught_up %v", st.WriteError, st.CaughtUp)
		}
		var res struct {
			WriteError string `json:"write_error"`
		}
		out := testkit.Call(t, c, "search", map[string]any{"query": "lantern", "scope": "all"})
		testkit.NoErr(t, json.Unmarshal([]byte(out.Content[0].(mcp.TextContent).Text), &res), "search answer")
		if !strings.Contains(res.WriteError, "no space left on device") {
			t.Fatalf("search while the disk is full says nothing of it: %s", out.Content[0].(mcp.TextContent).Text)
		}
	})

	t.Run("RecoversWhenSpaceReturns", func(t *testing.T) {
		resize("64m")
		testkit.Eventually(t, 2*time.Minute, func() (bool, string) {
			code, body := get(t, healthz, "")
			return code == 200, fmt.Sprintf("/healthz %d %s", code, body)
		})
		testkit.EventuallyMatchesDisk(t, c, root, time.Minute)
		if st := testkit.ReadStatus(t, c); st.WriteError != "" || st.Documents != 201 {
			t.Fatalf("after space returned: %d documents, write_error %q", st.Documents, st.WriteError)
		}
		testkit.WriteFile(t, root, "later.md", "# Later\n\nwritten after the disk had space again\n")
		testkit.EventuallyMatchesDisk(t, c, root, time.Minute)
	})
}
