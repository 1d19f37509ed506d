package relevance

import (
	"fmt"
	"strings"
)

// Markdown renders the figures of a run as the relevance block of BENCHMARKS.md: one row
// per set, guide beside FTS5, and whether guide reached the target (its error, 1 − MRR@10,
// at most half of FTS5's, and its recall@10 not below FTS5's). about says how and where
// the run was made.
func Markdown(f Figures, about string) string {
	var b strings.Builder
	b.WriteString("## Relevance: known-item search beside SQLite FTS5\n\n")
	b.WriteString(about + "\n\n")
	b.WriteString("| set | docs | queries | guide R@1 | guide R@10 | guide MRR@10 | FTS5 R@1 | FTS5 R@10 | FTS5 MRR@10 | error guide / FTS5 | target | sections named |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, s := range f.Sets {
		fts, ratio, target := "| – | – | – ", "–", "no FTS5 here"
		if s.FTS5 != nil {
			fts = fmt.Sprintf("| %.3f | %.3f | %.3f ", s.FTS5.RecallAt1, s.FTS5.RecallAt10, s.FTS5.MRR)
			ge, fe := 1-s.Guide.MRR, 1-s.FTS5.MRR
			if fe > 0 {
				ratio = fmt.Sprintf("%.2f", ge/fe)
			}
			target = "met"
			if ge > fe/2+1e-9 || s.Guide.RecallAt10 < s.FTS5.RecallAt10 {
				target = "not met"
			}
		}
		sec := "–"
		if s.Sections != nil {
			sec = fmt.Sprintf("%.3f", *s.Sections)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.3f | %.3f | %.3f %s| %s | %s | %s |\n", s.Name, s.Docs, s.Queries,
			s.Guide.RecallAt1, s.Guide.RecallAt10, s.Guide.MRR, fts, ratio, target, sec)
	}
	b.WriteString("\nSets: ")
	for i, s := range f.Sets {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "**%s** — %s", s.Name, s.About)
	}
	b.WriteString(".\n")
	return b.String()
}
