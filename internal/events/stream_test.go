package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// TestStreamCompressesAnOlderStream: a stream made before the file store compressed its
// blocks is opened, keeps its messages, and compresses from then on.
func TestStreamCompressesAnOlderStream(t *testing.T) {
	b := testkit.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(b.Conn)
	testkit.NoErr(t, err, "jetstream")
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: events.DefaultStream, Subjects: []string{events.Prefix + ".>"},
		Storage: jetstream.FileStorage, MaxMsgsPerSubject: 3, Discard: jetstream.DiscardOld, AllowDirect: true})
	testkit.NoErr(t, err, "an uncompressed stream")
	_, err = js.Publish(ctx, events.Prefix+".p.doc.a", []byte("before"))
	testkit.NoErr(t, err, "publish")

	s := &events.Stream{Conn: b.Conn}
	testkit.NoErr(t, s.Open(ctx), "open")
	st, err := js.Stream(ctx, events.DefaultStream)
	testkit.NoErr(t, err, "stream")
	info, err := st.Info(ctx)
	testkit.NoErr(t, err, "info")
	if info.Config.Compression != jetstream.S2Compression {
		t.Errorf("compression = %v, want s2", info.Config.Compression)
	}
	if info.State.Msgs != 1 {
		t.Errorf("messages = %d, want the 1 published before", info.State.Msgs)
	}
}
