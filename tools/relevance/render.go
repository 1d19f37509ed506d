package relevance

import (
	"fmt"
	"strings"

	"github.com/guide/guide/tools/report"
)

// Record is the relevance area's record of a run's figures: one row per set, guide beside
// FTS5, and the metrics its targets read — per set, guide's error (1 − MRR@10) against
// FTS5's, and guide's recall@10 less FTS5's. The caller fills in when, where and how.
func Record(f Figures) report.Record {
	rec := report.Record{Area: "relevance", Metrics: map[string]report.Metric{}}
	t := report.NewTable("", "set", ">docs", ">queries", ">guide R@1", ">guide R@10", ">guide MRR@10", ">FTS5 R@1", ">FTS5 R@10", ">FTS5 MRR@10", ">error guide / FTS5", ">sections named")
	var sets []string
	for _, s := range f.Sets {
		fts, ratio := []any{"–", "–", "–"}, "–"
		m := func(key string, v float64, unit report.Unit, what, note string) {
			rec.Metrics[key+"@"+s.Name] = report.Metric{Value: v, Unit: unit, What: what, Note: note}
		}
		m("relevance.mrr", s.Guide.MRR, report.UnitScore, "guide's MRR@10", "")
		m("relevance.r10", s.Guide.RecallAt10, report.UnitScore, "guide's recall@10", "")
		if s.FTS5 != nil {
			fts = []any{score(s.FTS5.RecallAt1), score(s.FTS5.RecallAt10), score(s.FTS5.MRR)}
			m("relevance.fts5.mrr", s.FTS5.MRR, report.UnitScore, "FTS5's MRR@10", "")
			ge, fe := 1-s.Guide.MRR, 1-s.FTS5.MRR
			if fe > 0 {
				ratio = fmt.Sprintf("%.2f", ge/fe)
				m("relevance.error/fts5", ge/fe, report.UnitTimes, "guide's error against FTS5's",
					fmt.Sprintf("MRR@10 %s against FTS5's %s", score(s.Guide.MRR), score(s.FTS5.MRR)))
			}
			m("relevance.r10-fts5", s.Guide.RecallAt10-s.FTS5.RecallAt10, report.UnitScore, "guide's recall@10 less FTS5's",
				fmt.Sprintf("%s against %s", score(s.Guide.RecallAt10), score(s.FTS5.RecallAt10)))
		}
		sec := "–"
		if s.Sections != nil {
			sec = score(*s.Sections)
		}
		t.Add(append(append([]any{s.Name, s.Docs, s.Queries, score(s.Guide.RecallAt1), score(s.Guide.RecallAt10), score(s.Guide.MRR)}, fts...), ratio, sec)...)
		sets = append(sets, fmt.Sprintf("**%s** — %s", s.Name, s.About))
	}
	if len(sets) > 0 {
		t.Notes = append(t.Notes, "Sets: "+strings.Join(sets, "; ")+".")
	}
	rec.Tables = append(rec.Tables, t)
	return rec
}

func score(v float64) string { return fmt.Sprintf("%.3f", v) }
