package reconcile_test

import (
	"context"
	"testing"

	"github.com/guide/guide/internal/reconcile"
	"github.com/guide/guide/internal/testkit"
)

// TestSettingsUnchanged: running the indexer leaves its settings as they were set; the
// defaults it applies are its own runtime state.
func TestSettingsUnchanged(t *testing.T) {
	x, _ := newIndexer(t, testkit.CopyTree(t, "../../testdata/sample"))
	x.NoWatch = true
	ctx, cancel := context.WithCancel(testkit.Context(t))
	x.Progress = func(p reconcile.Progress) {
		if p.Done {
			cancel() // the first reconcile is done
		}
	}
	testkit.NoErr(t, x.Run(ctx), "run")
	testkit.Equal(t, x.Interval, 0, "Interval")
	testkit.Equal(t, x.MaxSize, int64(0), "MaxSize")
	testkit.Equal(t, x.NoWatch, true, "NoWatch")
}
