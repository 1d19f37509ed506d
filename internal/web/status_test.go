package web

import (
	"testing"

	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/query"
)

// TestDescribe: the status line says how current the index is, in words.
func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   query.Status
		want statusLine
	}{
		{"UpToDate", query.Status{Documents: 12345, CaughtUp: true, InitialScanDone: true, AppliedSeq: 9, Index: &index.State{AppliedSeq: 9}},
			statusLine{Documents: "12,345 documents", Detail: "up to date", State: "current"}},
		{"OneDocument", query.Status{Documents: 1, CaughtUp: true, InitialScanDone: true},
			statusLine{Documents: "1 document", Detail: "up to date", State: "current"}},
		{"Behind", query.Status{Documents: 10, CaughtUp: true, InitialScanDone: true, Lag: 37},
			statusLine{Documents: "10 documents", Detail: "37 changes to apply", State: "behind"}},
		{"IndexBehindCatalog", query.Status{Documents: 10, CaughtUp: true, InitialScanDone: true, AppliedSeq: 50, Index: &index.State{AppliedSeq: 49}},
			statusLine{Documents: "10 documents", Detail: "1 change to apply", State: "behind"}},
		{"CatchingUp", query.Status{Documents: 400, AppliedSeq: 400, StreamLastSeq: 1000, InitialScanDone: true},
			statusLine{Documents: "400 documents", Detail: "indexing: 40% of the stream applied", State: "behind", Applied: 400, Total: 1000}},
		{"FirstScan", query.Status{Documents: 0, CaughtUp: true},
			statusLine{Documents: "0 documents", Detail: "indexing, first scan not complete", State: "behind"}},
		{"StreamAway", query.Status{Documents: 10, CaughtUp: true, InitialScanDone: true, StreamError: "nats: no servers available"},
			statusLine{Documents: "10 documents", Detail: "stream unreachable, answering from what is indexed: nats: no servers available", State: "error"}},
		{"DiskFull", query.Status{Documents: 10, InitialScanDone: true, WriteError: "catalog: write bodies.1: no space left on device"},
			statusLine{Documents: "10 documents", Detail: "cannot write, recent changes may be missing: catalog: write bodies.1: no space left on device", State: "error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describe(tc.st); got != tc.want {
				t.Fatalf("describe:\n got  %+v\n want %+v", got, tc.want)
			}
		})
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 12345: "12,345", 1234567: "1,234,567", -4321: "-4,321"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}
