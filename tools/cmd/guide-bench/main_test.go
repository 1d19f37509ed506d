package main

import (
	"fmt"
	"testing"

	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/report"
)

// TestParseFlags: a full run writes the results and the Markdown; a quick run writes
// neither unless asked; the record states the command as given.
func TestParseFlags(t *testing.T) {
	t.Run("Full", func(t *testing.T) {
		var m Main
		testkit.NoErr(t, m.ParseFlags(nil), "parse")
		testkit.Equal(t, m.Results, report.ResultsFile, "results")
		testkit.Equal(t, m.Out, report.MarkdownFile, "out")
		testkit.Equal(t, m.Config.Command, "go run ./tools/cmd/guide-bench", "command")
	})
	// The binaries measured are built from the tree the results name, unless others are
	// given to measure or building is turned off.
	t.Run("BuildsWhatItMeasures", func(t *testing.T) {
		for _, c := range []struct {
			args  []string
			build bool
		}{
			{nil, true},
			{[]string{"--bin", "/tmp/base/guide-mcp"}, false},
			{[]string{"--build=false"}, false},
			{[]string{"--render"}, false},
		} {
			var m Main
			testkit.NoErr(t, m.ParseFlags(c.args), "parse")
			testkit.Equal(t, m.Config.Build, c.build, fmt.Sprintf("build with %q", c.args))
		}
	})
	t.Run("QuickWritesNothing", func(t *testing.T) {
		var m Main
		testkit.NoErr(t, m.ParseFlags([]string{"--quick"}), "parse")
		testkit.Equal(t, m.Results, "", "results")
		testkit.Equal(t, m.Out, "", "out")
	})
	t.Run("QuickWritesWhenAsked", func(t *testing.T) {
		var m Main
		testkit.NoErr(t, m.ParseFlags([]string{"--quick", "--results", "r.json", "--scenarios", "search,once", "--sizes", ""}), "parse")
		testkit.Equal(t, m.Results, "r.json", "results")
		testkit.Equal(t, m.Config.Command, `go run ./tools/cmd/guide-bench --quick --results r.json --scenarios search,once --sizes ""`, "command")
	})
}
