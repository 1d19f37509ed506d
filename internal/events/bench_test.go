package events_test

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// BenchmarkGetExisting reads events at random from the stream of a JetStream store filled
// elsewhere — GUIDE_BENCH_NATS=DIR, a copy of a data directory's nats folder, such as the
// one `make bench` indexed the 100k corpus into (no process may have it open) — one
// direct get at a time: what reading a document's text from the stream, instead of the
// catalog's copy, would cost a search for each of its hits.
//
//	GUIDE_BENCH_NATS=DIR go test ./internal/events -run '^$' -bench GetExisting -benchtime 2000x
func BenchmarkGetExisting(b *testing.B) {
	dir := os.Getenv("GUIDE_BENCH_NATS")
	if dir == "" {
		b.Skip("GUIDE_BENCH_NATS is not set")
	}
	ns, err := server.NewServer(&server.Options{JetStream: true, StoreDir: dir, DontListen: true, NoSigs: true})
	testkit.NoErr(b, err, "server")
	go ns.Start()
	if !ns.ReadyForConnections(time.Minute) {
		b.Fatal("the server did not start")
	}
	b.Cleanup(ns.Shutdown)
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	testkit.NoErr(b, err, "connect")
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	testkit.NoErr(b, err, "jetstream")
	ctx := testkit.Context(b)
	st, err := js.Stream(ctx, events.DefaultStream)
	testkit.NoErr(b, err, "stream")
	info, err := st.Info(ctx)
	testkit.NoErr(b, err, "stream info")
	first, last := info.State.FirstSeq, info.State.LastSeq
	if last <= first {
		b.Skip("the stream holds no events")
	}
	var lat []time.Duration
	bytes := 0
	for b.Loop() {
		t := time.Now()
		m, err := st.GetMsg(ctx, first+rand.Uint64N(last-first+1))
		lat = append(lat, time.Since(t))
		if err == nil {
			bytes += len(m.Data)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(bytes)/float64(len(lat)), "event-bytes")
}
