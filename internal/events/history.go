package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// What the stream remembers of a document's past, read for the changes of a project: the
// events after a sequence (Window), the events at given sequences (At), such as a
// document's previous one (its PrevSeq), and the sequence a time falls at (SeqAt). The stream keeps the last History events of
// each document (MaxMsgsPerSubject), so a state older than that is gone: At then has
// nothing for it, and the caller says so.

// Horizon is what one read of the stream's history knew of the stream.
type Horizon struct {
	Last uint64 // the stream's last sequence when the read began
	Kept int64  // events kept per document (MaxMsgsPerSubject)
	ID   string // the stream's incarnation (see ID)
}

// Horizon reads the stream's last sequence, how many events it keeps per document, and
// its incarnation.
func (s *Stream) Horizon(ctx context.Context) (Horizon, error) {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return Horizon{}, err
	}
	return Horizon{Last: info.State.LastSeq, Kept: info.Config.MaxMsgsPerSubject, ID: ID(info)}, nil
}

// Window reads, in stream order, the events of the project's documents below folder (""
// for all) with a sequence in (after, h.Last], at most limit of them, without their
// content. Each event has its Seq and Time. upTo is the sequence the read covers: every
// event of those documents up to it was returned; complete is false when some remained.
// Session documents are never read: they are their sessions' own.
//
// It reads with a consumer of the folder's subjects that delivers headers only (see
// headers): the server sends each stored event as it is, its sequence and time in the
// reply subject. A batched direct get costs three times more for the same events, since
// the server writes a header block for each answer (stream, subject, sequence, time,
// pending) and the client reads all of it back; reading every subject rather than the
// folder's also reads what the answer leaves out. The filter makes the server count what
// it matches when the consumer is made, which costs a little from an early cursor on a
// large project (docs/design.md, "Reading the changes", has the figures). In a cluster,
// making the consumer goes through the cluster's metadata leader, a round more than a
// direct get.
func (s *Stream) Window(ctx context.Context, h Horizon, project, folder string, after uint64, limit int) (evs []Event, upTo uint64, complete bool, err error) {
	if h.Last <= after {
		return nil, max(after, h.Last), true, nil
	}
	filter, err := s.Subjects(project).Folder(folder)
	if err != nil {
		return nil, 0, false, err
	}
	cons, release, err := s.headers(ctx, jetstream.ConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    after + 1,
	})
	if err != nil {
		return nil, 0, false, fmt.Errorf("read events after %d: %w", after, err)
	}
	defer release()
	ci := cons.CachedInfo()
	if ci == nil {
		return nil, 0, false, fmt.Errorf("read events after %d: no consumer info", after)
	}
	// The consumer was made after h was read: once it has nothing pending, every event up
	// to h.Last was delivered. One event more than the limit is fetched, to tell a full
	// window from a complete one.
	upTo = after
	remaining := ci.NumPending
	evs = make([]Event, 0, min(remaining, uint64(limit)))
	for remaining > 0 {
		batch, err := cons.Fetch(int(min(remaining, uint64(limit-len(evs)+1), 1000)), jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			return nil, 0, false, fmt.Errorf("read events after %d: %w", after, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return nil, 0, false, fmt.Errorf("read events after %d: %w", after, err)
			}
			seq := md.Sequence.Stream
			if seq > h.Last {
				return evs, h.Last, true, nil // in order: none is left up to h.Last
			}
			if len(evs) == limit {
				return evs, seq - 1, false, nil
			}
			upTo, remaining = seq, md.NumPending
			e, err := Decode(m.Subject(), m.Headers(), nil)
			if err != nil {
				continue // not an event of ours
			}
			e.Seq, e.Time = seq, md.Timestamp
			evs = append(evs, e)
		}
		if err := batch.Error(); err != nil {
			return nil, 0, false, fmt.Errorf("read events after %d: %w", after, err)
		}
		if n == 0 {
			return nil, 0, false, fmt.Errorf("read events after %d: the server sent nothing, %d pending", after, remaining)
		}
	}
	return evs, h.Last, true, nil
}

// directRaw sends one direct get request with several answers and calls fn with each
// message, its sequence and time, until fn returns false (the rest is drained) or the
// batch ends.
func (s *Stream) directRaw(ctx context.Context, req map[string]any, fn func(m *nats.Msg, seq uint64, ts time.Time) bool) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	inbox := s.Conn.NewRespInbox()
	sub, err := s.Conn.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	_ = sub.SetPendingLimits(-1, -1)
	if err := s.Conn.PublishRequest("$JS.API.DIRECT.GET."+s.Name, inbox, body); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	more := true
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return fmt.Errorf("direct get: %w", err)
		}
		if len(m.Data) == 0 && m.Header != nil {
			switch st := m.Header.Get("Status"); st {
			case "204", "404":
				return nil
			case "":
			default:
				return fmt.Errorf("direct get: status %s %s", st, m.Header.Get("Description"))
			}
		}
		if !more {
			continue
		}
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return fmt.Errorf("direct get: sequence: %w", err)
		}
		ts, _ := time.Parse(time.RFC3339Nano, m.Header.Get(jetstream.TimeStampHeaer))
		more = fn(m, seq, ts)
	}
}

// At returns, with their content, the events of the project's documents at the stream
// sequences seqs that the stream still keeps: a sequence missing from the answer is no
// longer kept (or is not a document event of the project). The gets are sent at once and
// their answers gathered, one round trip in all rather than one each.
func (s *Stream) At(ctx context.Context, project string, seqs []uint64) (map[uint64]Event, error) {
	out := make(map[uint64]Event, len(seqs))
	if len(seqs) == 0 {
		return out, nil
	}
	prefix := s.Conn.NewRespInbox()
	sub, err := s.Conn.SubscribeSync(prefix + ".*")
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	_ = sub.SetPendingLimits(-1, -1)
	subject := "$JS.API.DIRECT.GET." + s.Name
	for i, seq := range seqs {
		if err := s.Conn.PublishRequest(subject, prefix+"."+strconv.Itoa(i), fmt.Appendf(nil, `{"seq":%d}`, seq)); err != nil {
			return nil, err
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	for range seqs {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("direct get: %w", err)
		}
		err = directAnswer(m, func(e Event) {
			if e.Project == project && e.Session == "" && (e.Op == OpUpsert || e.Op == OpDelete) {
				out[e.Seq] = e
			}
		})
		if err != nil && !errors.Is(err, errBatchEnd) {
			return nil, err
		}
	}
	return out, nil
}

// SeqAt returns the sequence just below the first event stored at or after t: the cursor
// of "since t". It is h.Last when nothing was stored since.
func (s *Stream) SeqAt(ctx context.Context, h Horizon, t time.Time) (uint64, error) {
	var first uint64
	err := s.direct(ctx, map[string]any{"start_time": t.UTC(), "batch": 1}, func(e Event) {
		if first == 0 {
			first = e.Seq
		}
	})
	if err != nil {
		return 0, err
	}
	if first == 0 {
		return h.Last, nil
	}
	return first - 1, nil
}

// errBatchEnd ends the reading of a direct get's answers.
var errBatchEnd = errors.New("end of batch")

// direct sends one direct get request with several answers (a batch or a multi-subject
// get) and calls fn with each event, its Seq and Time set. Messages of the stream that
// are not events of this contract (another program's) are skipped.
func (s *Stream) direct(ctx context.Context, req map[string]any, fn func(Event)) error {
	return s.directRaw(ctx, req, func(m *nats.Msg, seq uint64, ts time.Time) bool {
		if e, err := Decode(m.Header.Get(jetstream.SubjectHeader), m.Header, m.Data); err == nil {
			e.Seq, e.Time = seq, ts
			fn(e)
		}
		return true
	})
}

// directAnswer handles one answer of a direct get: an event for fn, or the status that
// ends the batch (errBatchEnd), or a failure.
func directAnswer(m *nats.Msg, fn func(Event)) error {
	if len(m.Data) == 0 && m.Header != nil {
		switch st := m.Header.Get("Status"); st {
		case "204", "404": // end of batch; nothing at all
			return errBatchEnd
		case "":
		default:
			return fmt.Errorf("direct get: status %s %s", st, m.Header.Get("Description"))
		}
	}
	subject := m.Header.Get(jetstream.SubjectHeader)
	seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
	if err != nil {
		return fmt.Errorf("direct get: sequence: %w", err)
	}
	e, err := Decode(subject, m.Header, m.Data)
	if err != nil {
		return nil // not an event of ours
	}
	e.Seq = seq
	if ts, err := time.Parse(time.RFC3339Nano, m.Header.Get(jetstream.TimeStampHeaer)); err == nil {
		e.Time = ts
	}
	fn(e)
	return nil
}
