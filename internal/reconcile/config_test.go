package reconcile_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/guide/guide/internal/guideyaml"
	"github.com/guide/guide/internal/testkit"
)

// categories is a valid guide.yaml of n categories.
func categories(n int) string {
	var b strings.Builder
	b.WriteString("categories:\n")
	for i := range n {
		fmt.Fprintf(&b, "  c%06d:\n    dir: Characters\n    description: category number %d\n", i, i)
	}
	return b.String()
}

// TestOversizedConfiguration: a configuration too large for the stream is reported with
// its file and the limit, the documents are published all the same, and the last good
// configuration stays in force.
func TestOversizedConfiguration(t *testing.T) {
	t.Run("FileOverTheLimit", func(t *testing.T) {
		// 300,000 categories: far over what one event may carry.
		root := testkit.CopyTree(t, "../../testdata/sample")
		testkit.WriteFile(t, root, "guide.yaml", categories(300_000))
		x, s := newIndexer(t, root)
		sum, err := x.Reconcile(testkit.Context(t))
		testkit.NoErr(t, err, "reconcile")
		want := fmt.Sprintf("guide.yaml: the file is %d bytes; the limit is %d bytes", len(categories(300_000)), guideyaml.MaxFileBytes)
		if !strings.HasPrefix(sum.ConfigError, want) {
			t.Errorf("config error %q; want it to start %q", sum.ConfigError, want)
		}
		testkit.Equal(t, sum.Config, "invalid", "config")
		testkit.Equal(t, len(documents(t, s)), len(sampleDocs), "documents published")
		_, found, err := s.LatestConfig(testkit.Context(t), "p")
		testkit.NoErr(t, err, "latest config")
		testkit.Equal(t, found, false, "a configuration on the stream")
	})
	t.Run("EncodedOverTheEventLimit", func(t *testing.T) {
		// Under the file limit, over what the stream takes (as with a NATS server whose
		// max_payload is small).
		root := testkit.CopyTree(t, "../../testdata/sample")
		testkit.WriteFile(t, root, "guide.yaml", categories(2_000))
		x, s := newIndexer(t, root)
		x.MaxSize = 64 << 10
		sum, err := x.Reconcile(testkit.Context(t))
		testkit.NoErr(t, err, "reconcile")
		if !strings.HasPrefix(sum.ConfigError, "guide.yaml: the configuration is ") || !strings.Contains(sum.ConfigError, "at most 65536 bytes") {
			t.Errorf("config error %q; want one naming guide.yaml and the limit of 65536 bytes", sum.ConfigError)
		}
		testkit.Equal(t, len(documents(t, s)), len(sampleDocs), "documents published")
	})
}
