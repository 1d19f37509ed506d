package text

import "sync"

// MarkdownHandoff hands the Markdown of each document one projection of a process parsed
// (the catalog, which folds the stream first) to the one that follows it (the search
// index, a moment behind on its own consumer), so that a document is parsed once between
// them. Documents are handed in the stream's order: the follower takes a document's
// Markdown by its sequence and content hash, and whatever was put before that sequence
// is dropped then, as the follower has passed it. It holds at most its capacity of
// documents, the oldest going first: a follower further behind parses for itself. A nil
// MarkdownHandoff hands nothing over.
type MarkdownHandoff struct {
	mu      sync.Mutex
	queue   []handed // in the order of seq; queue[head:] are held
	head    int
	max     int
	taken   uint64 // the last sequence the follower asked for
	last    uint64 // the last sequence put
	handedN int    // documents handed over, for Stats
	parsed  int    // documents the follower parsed itself, for Stats
}

type handed struct {
	seq  uint64
	hash string
	md   Markdown
}

// HandoffDocuments is how many documents a process's handoff holds: how far behind the
// catalog the search index may be and still find them parsed. During a first index of
// 100k documents it falls up to about 20,000 behind.
const HandoffDocuments = 32768

// NewMarkdownHandoff returns a handoff holding at most n documents.
func NewMarkdownHandoff(n int) *MarkdownHandoff { return &MarkdownHandoff{max: max(n, 1)} }

// Put parses b, the content of the event at seq whose content hash is hash (checked by the
// caller), and holds its Markdown for the follower, unless the follower has passed seq.
// The Markdown returned may be shared: read it, never change it.
func (h *MarkdownHandoff) Put(seq uint64, hash string, b []byte) Markdown {
	md := ParseMarkdown(b)
	if h == nil || hash == "" {
		return md
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if seq <= h.taken || seq <= h.last {
		return md // the follower has passed it, or it is put again (a batch applied again)
	}
	h.last = seq
	if len(h.queue)-h.head >= h.max {
		h.queue[h.head] = handed{}
		h.head++
	}
	if h.head > 0 && h.head >= len(h.queue)/2 { // move the held to the front now and then
		n := copy(h.queue, h.queue[h.head:])
		clear(h.queue[n:])
		h.queue, h.head = h.queue[:n], 0
	}
	h.queue = append(h.queue, handed{seq: seq, hash: hash, md: md})
	return md
}

// Take returns the Markdown of the event at seq whose content hash is hash (checked by
// the caller), as Put parsed it, or parses b itself when it was not put; whatever was put
// before seq is dropped.
func (h *MarkdownHandoff) Take(seq uint64, hash string, b []byte) Markdown {
	if h == nil || hash == "" {
		return ParseMarkdown(b)
	}
	h.mu.Lock()
	h.taken = max(h.taken, seq)
	for h.head < len(h.queue) && h.queue[h.head].seq < seq {
		h.queue[h.head] = handed{}
		h.head++
	}
	if h.head < len(h.queue) && h.queue[h.head].seq == seq && h.queue[h.head].hash == hash {
		md := h.queue[h.head].md
		h.queue[h.head] = handed{}
		h.head++
		h.handedN++
		h.mu.Unlock()
		return md
	}
	h.parsed++
	h.mu.Unlock()
	return ParseMarkdown(b)
}

// Stats says how many documents the follower took as put, how many it parsed itself, and
// how many are held.
func (h *MarkdownHandoff) Stats() (handed, parsed, held int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.handedN, h.parsed, len(h.queue) - h.head
}
