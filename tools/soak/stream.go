package soak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/guide/guide/internal/events"
)

// streamView reads the stream the way an operator would with the nats CLI: its consumers,
// its session subjects and every message it holds.
type streamView struct {
	nc      *nats.Conn
	stream  jetstream.Stream
	project string
}

func openStream(ctx context.Context, url, project string) (*streamView, error) {
	nc, err := nats.Connect(url, nats.Timeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, events.DefaultStream)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("stream %s: %w", events.DefaultStream, err)
	}
	return &streamView{nc: nc, stream: s, project: project}, nil
}

func (v *streamView) close() { v.nc.Close() }

// info is the stream's consumer count and last sequence.
func (v *streamView) info(ctx context.Context) (consumers int, last uint64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	i, err := v.stream.Info(ctx)
	if err != nil {
		return 0, 0, err
	}
	return i.State.Consumers, i.State.LastSeq, nil
}

// consumers describes each consumer of the stream in a line: its name, what it filters,
// where it started and how far behind it is.
func (v *streamView) consumers(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out []string
	l := v.stream.ListConsumers(ctx)
	for c := range l.Info() {
		filter := c.Config.FilterSubject
		if len(c.Config.FilterSubjects) > 0 {
			filter = strings.Join(c.Config.FilterSubjects, ",")
		}
		out = append(out, fmt.Sprintf("%s filter=%s deliver=%s start=%d headers_only=%t inactive=%s created=%s delivered=%d pending=%d waiting=%d",
			c.Name, filter, c.Config.DeliverPolicy, c.Config.OptStartSeq, c.Config.HeadersOnly, c.Config.InactiveThreshold,
			c.Created.UTC().Format("15:04:05.000"), c.Delivered.Stream, c.NumPending, c.NumWaiting))
	}
	sort.Strings(out)
	return out
}

// sessionDocuments lists the session documents the stream still holds: subjects under
// ses.> whose last event is not a delete.
func (v *streamView) sessionDocuments(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	filter := events.NewSubjects(v.project).Sessions()
	i, err := v.stream.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, err
	}
	var live []string
	for subj := range i.State.Subjects {
		m, err := v.stream.GetLastMsgForSubject(ctx, subj)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m.Header.Get(events.HdrOp) != string(events.OpDelete) {
			live = append(live, subj)
		}
	}
	sort.Strings(live)
	return live, nil
}

// scan is what reading every message of the project showed.
type scan struct {
	Messages int
	Escaped  []string                 // documents (or subjects) of messages that carry the outside marker
	Latest   map[string]string        // document path → content of its last upsert (status ok)
	Status   map[string]events.Status // document path → status of its last upsert
	Listed   map[string]bool          // document path → its last event is an upsert
}

// scanAll reads every message of the project from the first, and looks for marker in
// each: in its content and its headers.
func (v *streamView) scanAll(ctx context.Context, marker string) (scan, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	_, last, err := v.info(ctx)
	if err != nil {
		return scan{}, err
	}
	sc := scan{Latest: map[string]string{}, Status: map[string]events.Status{}, Listed: map[string]bool{}}
	if last == 0 {
		return sc, nil
	}
	subj := events.NewSubjects(v.project)
	cons, err := v.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subj.All()}, DeliverPolicy: jetstream.DeliverAllPolicy, InactiveThreshold: 5 * time.Second})
	if err != nil {
		return sc, err
	}
	mk := []byte(marker)
	empty := 0
	for {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return sc, err
		}
		n := 0
		var seq uint64
		for m := range batch.Messages() {
			n++
			sc.Messages++
			md, err := m.Metadata()
			if err == nil {
				seq = md.Sequence.Stream
			}
			carries := bytes.Contains(m.Data(), mk)
			for _, vals := range m.Headers() {
				for _, h := range vals {
					carries = carries || strings.Contains(h, marker)
				}
			}
			p, perr := subj.ParseDocument(m.Subject())
			if carries {
				where := m.Subject()
				if perr == nil {
					where = p
				}
				sc.Escaped = append(sc.Escaped, where)
			}
			if perr != nil {
				continue
			}
			e, err := events.Decode(m.Subject(), m.Headers(), m.Data())
			if err != nil {
				continue
			}
			sc.Listed[p] = e.Op == events.OpUpsert
			delete(sc.Latest, p)
			delete(sc.Status, p)
			if e.Op == events.OpUpsert {
				if e.Status == "" {
					e.Status = events.StatusOK
				}
				sc.Status[p] = e.Status
				if e.Status == events.StatusOK {
					sc.Latest[p] = string(e.Content)
				}
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return sc, err
		}
		if seq >= last {
			return sc, nil
		}
		if empty = empty + 1; n > 0 {
			empty = 0
		}
		if empty >= 3 { // the rest was purged or is not the project's
			return sc, nil
		}
	}
}
