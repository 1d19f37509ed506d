package lineio_test

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/guide/guide/internal/lineio"
	"github.com/guide/guide/internal/testkit"
)

func TestLimitLines(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		long           int
	}{
		{"Short", "ab\ncd\n", "ab\ncd\n", 0},
		{"Exactly", "abcd\nef\n", "abcd\nef\n", 0},
		{"Long", "abcdefgh\nok\n", "abcd\nok\n", 1},
		{"LongLast", "ok\nabcdefgh", "ok\nabcd", 1},
		{"Several", "abcdefgh\nabcdefgh\nab\n", "abcd\nabcd\nab\n", 2},
		{"Huge", strings.Repeat("x", 1<<20) + "\n{}\n", "xxxx\n{}\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			long := 0
			// One byte a read too: the bound holds across reads.
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				long = 0
				b, err := io.ReadAll(lineio.LimitLines(r, 4, func() { long++ }))
				testkit.NoErr(t, err, "read")
				testkit.Equal(t, string(b), tc.want, "passed on")
				testkit.Equal(t, long, tc.long, "lines too long")
			}
		})
	}
}
