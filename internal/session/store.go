package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Record is what the store keeps of one issued session: enough for any query process of
// the deployment (a restarted one, another replica, a new owner) to accept the session id
// and give the session back its focus and history. Its attached documents need no record:
// they live on the event stream under the session's token.
type Record struct {
	Token    string     `json:"token"` // Token(id): the id itself is never stored
	Project  string     `json:"project"`
	Created  time.Time  `json:"created"`
	LastSeen time.Time  `json:"last_seen"`
	Ended    *time.Time `json:"ended,omitempty"`
	Focus    string     `json:"focus"`
	History  []string   `json:"history,omitempty"`
	Chosen   bool       `json:"chosen,omitempty"` // the focus was chosen by a focus call
}

// DefaultBucket is the JetStream key-value bucket of the sessions of a deployment.
const DefaultBucket = "GUIDE_SESSIONS"

// Store keeps session records in a JetStream key-value bucket, one key per session token.
// A bucket rather than subjects on the event stream: a record is a small mutable value
// read by key (the latest only, compare-and-set free of ordering), the projections never
// need to skip it, and the bucket's MaxAge drops records of sessions nobody touched.
type Store struct {
	kv jetstream.KeyValue
}

// OpenStore creates or binds the bucket. Records untouched for longer than maxAge expire.
func OpenStore(ctx context.Context, js jetstream.JetStream, bucket string, replicas int, maxAge time.Duration) (*Store, error) {
	if bucket == "" {
		bucket = DefaultBucket
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "guide: MCP sessions, by token (a hash of the session id)",
		History:     1,
		TTL:         maxAge,
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("session bucket %s: %w", bucket, err)
	}
	return &Store{kv: kv}, nil
}

// errNoRecord says the store has no record of a token: the session was never issued, or
// its record expired.
var errNoRecord = errors.New("no such session")

// Get returns the record of a token, or errNoRecord.
func (s *Store) Get(ctx context.Context, token string) (Record, error) {
	e, err := s.kv.Get(ctx, token)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Record{}, errNoRecord
	}
	if err != nil {
		return Record{}, err
	}
	var r Record
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return Record{}, fmt.Errorf("session record %s: %w", token, err)
	}
	return r, nil
}

// Put writes a record.
func (s *Store) Put(ctx context.Context, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.kv.Put(ctx, r.Token, b)
	return err
}

// List returns the records of a project.
func (s *Store) List(ctx context.Context, project string) ([]Record, error) {
	lister, err := s.kv.ListKeys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Record
	for k := range lister.Keys() {
		r, err := s.Get(ctx, k)
		if errors.Is(err, errNoRecord) {
			continue
		}
		if err != nil {
			_ = lister.Stop()
			return nil, err
		}
		if r.Project == project {
			out = append(out, r)
		}
	}
	return out, nil
}

// Watch calls fn with every record written after it starts, until ctx ends or the watch
// fails; it calls started once it is watching, before any fn, so that the caller can read
// what was written before. It holds one ordered consumer on the bucket.
func (s *Store) Watch(ctx context.Context, started func(), fn func(Record)) error {
	w, err := s.kv.WatchAll(ctx, jetstream.UpdatesOnly(), jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	started()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("session watch ended")
			}
			if e == nil {
				continue
			}
			var r Record
			if json.Unmarshal(e.Value(), &r) == nil {
				fn(r)
			}
		}
	}
}
