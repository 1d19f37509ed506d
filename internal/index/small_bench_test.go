package index_test

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// BenchmarkApplySmall applies what session churn sends the index: one event a batch, a
// session document attached then detached, over a small tree. cpu-ms/op counts the
// process's CPU, so that scorch's work in the background (persisting, merging) is in it.
func BenchmarkApplySmall(b *testing.B) {
	x := &index.Index{Dir: b.TempDir(), Logger: testkit.Logger()}
	testkit.NoErr(b, x.Open(), "open")
	b.Cleanup(func() { _ = x.Close() })
	testkit.NoErr(b, x.Reset(projection.State{StreamID: "s", Project: "p"}), "reset")
	seq := uint64(0)
	next := func(e events.Event) events.Batch {
		seq++
		e.Seq, e.Project = seq, "p"
		return events.Batch{Events: []events.Event{e}}
	}
	for i := range 15 {
		c := []byte(fmt.Sprintf("# Guide %d\n\nSome words on python style and code review, part %d.", i, i))
		testkit.NoErr(b, x.Apply(next(events.Event{Op: events.OpUpsert, Path: fmt.Sprintf("dev/g%d.md", i),
			Hash: events.HashContent(c), Status: events.StatusOK, Content: c})), "apply")
	}
	content := []byte("# Notes\n\nA session document about review and style, with a few more words in it.")
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("n%d.md", i%20)
		testkit.NoErr(b, x.Apply(next(events.Event{Op: events.OpUpsert, Session: "t", Path: name,
			Hash: events.HashContent(content), Status: events.StatusOK, Content: content})), "attach")
		testkit.NoErr(b, x.Apply(next(events.Event{Op: events.OpDelete, Session: "t", Path: name})), "detach")
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
}
