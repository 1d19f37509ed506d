// Package lineio bounds the messages of a line-framed stream, as the MCP stdio transport
// frames them. It imports only the standard library: the stdio bridge links it.
package lineio

import "io"

// LimitLines bounds the messages read from r, one a line as the stdio transport frames
// them, to max bytes each: of a longer line only the first max bytes pass and the line
// ends there, so the transport answers it with a parse error and reads on, never holding
// more than max bytes of one message. tooLong, when set, hears of each such line.
func LimitLines(r io.Reader, max int64, tooLong func()) io.Reader {
	return &lineLimit{r: r, max: max, tooLong: tooLong, raw: make([]byte, 32<<10)}
}

type lineLimit struct {
	r        io.Reader
	max      int64
	tooLong  func()
	raw      []byte
	pending  []byte // read from r, not yet looked at
	err      error  // r's error, returned once pending is used up
	n        int64  // bytes of the current line passed on
	dropping bool   // the current line is over max: drop the rest of it
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(l.pending) == 0 {
			if l.err != nil {
				return 0, l.err
			}
			n, err := l.r.Read(l.raw)
			l.pending, l.err = l.raw[:n], err
			continue
		}
		out := 0
		for out < len(p) && len(l.pending) > 0 {
			b := l.pending[0]
			l.pending = l.pending[1:]
			switch {
			case b == '\n':
				p[out] = b
				out++
				l.n, l.dropping = 0, false
			case l.dropping:
			case l.n < l.max:
				p[out] = b
				out++
				l.n++
			default:
				l.dropping = true
				if l.tooLong != nil {
					l.tooLong()
				}
			}
		}
		if out > 0 {
			return out, nil
		}
	}
}
