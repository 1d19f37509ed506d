package bridge

import (
	"slices"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// The bridge binary reads back what guide-mcp wrote, the owner's arguments untouched
// (flags of guide-mcp that the bridge's own parser would take included).
func TestCommandRoundTrip(t *testing.T) {
	want := Command{Dir: "/d/a b", MaxLine: 4 << 20, LogLevel: "debug", Owner: "/bin/guide-mcp",
		Args: []string{"--root", "/r", "--data", "/x", "--log-level", "warn", "--", "-x"}}
	got, err := ParseCommand(want.Argv())
	testkit.NoErr(t, err, "parse")
	testkit.Equal(t, got.Dir, want.Dir, "data")
	testkit.Equal(t, got.MaxLine, want.MaxLine, "max line")
	testkit.Equal(t, got.LogLevel, want.LogLevel, "log level")
	testkit.Equal(t, got.Owner, want.Owner, "owner")
	testkit.Equal(t, slices.Equal(got.Args, want.Args), true, "the owner's arguments")
}

func TestCommandRefused(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--data", "/d"},
		{"--owner", "/bin/guide-mcp"},
		{"--data", "/d", "--owner", "/bin/guide-mcp", "--max-line", "0"},
		{"--data", "/d", "--owner", "/bin/guide-mcp", "--max-line", "1", "--serve"},
	} {
		if _, err := ParseCommand(args); err == nil {
			t.Errorf("ParseCommand(%q) accepted", args)
		}
	}
}
