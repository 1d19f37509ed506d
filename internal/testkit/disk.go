package testkit

import (
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/testkit/oracle"
)

// Disk reads every document of a tree as the indexer publishes it (oracle.Disk, with the
// indexer's defaults and no size limit): relative slash paths to the bytes of each file,
// or of the file a link leads to; "" for what cannot be read (a link that leaves the root
// or leads nowhere, an unreadable file).
func Disk(t testing.TB, root string) map[string]string {
	t.Helper()
	docs := disk(t, root)
	out := make(map[string]string, len(docs))
	for p, d := range docs {
		out[p] = d.Content
	}
	return out
}

// disk is the documents of the tree at root, for a pipeline's project.
func disk(t testing.TB, root string) map[string]oracle.Doc {
	t.Helper()
	docs, err := oracle.Disk(root, oracle.Options{Project: "test"})
	if err != nil {
		t.Fatalf("read the disk: %v", err)
	}
	return docs
}

// Mismatch compares what an MCP client sees through tree, view and search with the
// documents of the tree at root (oracle.Compare), and describes the first difference (""
// when they agree).
func Mismatch(t testing.TB, c client.MCPClient, root string) string {
	t.Helper()
	d, err := oracle.Compare(Context(t), c, disk(t, root))
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// RequireMatchesDisk fails unless tree, view and search agree with the files under root.
func RequireMatchesDisk(t testing.TB, c client.MCPClient, root string) {
	t.Helper()
	if m := Mismatch(t, c, root); m != "" {
		t.Fatal(m)
	}
}

// EventuallyMatchesDisk waits until tree, view and search agree with the files under root.
func EventuallyMatchesDisk(t testing.TB, c client.MCPClient, root string, within time.Duration) {
	t.Helper()
	Eventually(t, within, func() (bool, string) {
		m := Mismatch(t, c, root)
		return m == "", m
	})
}
