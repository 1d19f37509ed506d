package search

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/guide/guide/internal/index/querylang"
)

// cursor is where a page ends: the last hit's sort key, and which search it belongs to.
type cursor struct {
	Key     string `json:"k"` // fingerprint of query and folder
	Score   string `json:"s"`
	Path    string `json:"p"`
	Relaxed bool   `json:"r,omitempty"`
	// Past is set when the hit lies after the nearness window: Score is then its score
	// by the query's words alone (rerank.go).
	Past bool `json:"w,omitempty"`
}

func fingerprint(q querylang.Query, folder string) string {
	h := sha256.Sum256([]byte(q.String() + "\x00" + folder))
	return hex.EncodeToString(h[:6])
}

func decodeCursor(s string, key string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > 8192 || json.Unmarshal(b, &c) != nil {
		return c, fmt.Errorf("%w: not a cursor this server issued", ErrInvalidCursor)
	}
	if c.Key != key {
		return c, fmt.Errorf("%w: it belongs to another query or folder", ErrInvalidCursor)
	}
	if _, err := strconv.ParseFloat(c.Score, 64); err != nil {
		return c, fmt.Errorf("%w: bad score", ErrInvalidCursor)
	}
	return c, nil
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CursorAfter returns the cursor of the page that starts after hit h of this request's
// results, for a caller that shows fewer hits than it was given.
func (r Request) CursorAfter(h Hit, relaxed bool) string {
	return cursor{Key: fingerprint(r.Query, r.Folder+scopeKey(r.Scope)), Score: strconv.FormatFloat(h.Score, 'g', -1, 64),
		Path: h.key().ID(), Relaxed: relaxed, Past: h.past}.encode()
}
