package report

import (
	"fmt"
	"strings"
)

// ResultsFile and MarkdownFile are where make bench keeps the results and their rendering.
const (
	ResultsFile  = "BENCHMARKS.json"
	MarkdownFile = "BENCHMARKS.md"
)

// Render writes the whole of BENCHMARKS.md from the results: the targets, each with its
// latest figure; each area's latest run, its tables with the baselines measured beside
// guide; then how each area is measured.
func Render(res *Results) string {
	var b strings.Builder
	b.WriteString("# Benchmarks\n\n")
	fmt.Fprintf(&b, "Written by `make bench` from [%s](%s), the latest run of each area with its date, machine, load and command; "+
		"edits here are lost (`go run ./tools/cmd/guide-bench --render` writes it again). A run of some scenarios replaces those areas' figures only. "+
		"Baselines are measured in the same run as the figure beside them. [How each area is measured](#how-each-is-measured).\n\n", ResultsFile, ResultsFile)
	b.WriteString("## Targets\n\n")
	b.WriteString("| area | target | goal | measured | baseline, same run | | date |\n|---|---|---|---|---|---|---|\n")
	for _, t := range Targets {
		st := t.Check(res)
		a := area(t.Area)
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s | %s | %s | %s |\n", a.Title, Anchor(a.Title), t.What, st.Goal,
			cell(st.Measured), cell(st.Baseline), st.Verdict, day(st.Date))
	}
	b.WriteString("\n")

	for _, a := range Areas {
		fmt.Fprintf(&b, "## %s\n\n", a.Title)
		rec, ok := res.Record(a.Key)
		if !ok {
			fmt.Fprintf(&b, "Not measured yet: `%s`.\n\n", a.Run)
			continue
		}
		renderRecord(&b, rec)
	}
	// Records of areas this renderer does not know are kept and shown, not dropped.
	for _, rec := range res.Records {
		if areaIndex(rec.Area) == len(Areas) {
			fmt.Fprintf(&b, "## %s\n\n", rec.Area)
			renderRecord(&b, rec)
		}
	}

	b.WriteString("## How each is measured\n\n")
	if s := how("common"); s != "" {
		b.WriteString(s + "\n\n")
	}
	for _, a := range Areas {
		fmt.Fprintf(&b, "### %s\n\n", a.HowHeading())
		if s := how(a.Key); s != "" {
			b.WriteString(s + "\n\n")
		}
		fmt.Fprintf(&b, "Alone: `%s`. Its figures: [%s](#%s).\n\n", a.Run, a.Title, Anchor(a.Title))
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// renderRecord writes one area's run: when, where and how, then its tables.
func renderRecord(b *strings.Builder, rec Record) {
	if rec.NotMeasured != "" {
		fmt.Fprintf(b, "**Not measured since %s**: %s\n\n", rec.Date, rec.NotMeasured)
	} else {
		fmt.Fprintf(b, "Measured %s by `%s`", rec.Date, rec.Command)
		if rec.Commit != "" {
			fmt.Fprintf(b, " (build %s)", rec.Commit)
		}
		fmt.Fprintf(b, ", on %s; %s.\n\n", rec.Machine, rec.Load)
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
	if len(rec.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, t := range rec.Tables {
		t.render(b)
	}
}

func (t Table) render(b *strings.Builder) {
	if t.Title != "" {
		fmt.Fprintf(b, "**%s**\n\n", t.Title)
	}
	if t.About != "" {
		b.WriteString(t.About + "\n\n")
	}
	if len(t.Columns) > 0 {
		b.WriteString("|")
		for _, c := range t.Columns {
			b.WriteString(" " + cell(c) + " |")
		}
		b.WriteString("\n|")
		for i := range t.Columns {
			if i < len(t.Align) && t.Align[i] == 'r' {
				b.WriteString("---:|")
			} else {
				b.WriteString("---|")
			}
		}
		b.WriteString("\n")
		for _, row := range t.Rows {
			b.WriteString("|")
			for i := range t.Columns {
				v := ""
				if i < len(row) {
					v = row[i]
				}
				b.WriteString(" " + cell(v) + " |")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	for _, n := range t.Notes {
		b.WriteString(n + "\n\n")
	}
}

// cell keeps a table cell on its line and its pipes from ending it.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// String is how a record states its machine.
func (m Machine) String() string {
	var parts []string
	if m.CPU != "" {
		parts = append(parts, m.CPU)
	}
	if m.Memory != "" {
		parts = append(parts, m.Memory)
	}
	if m.Kernel != "" {
		parts = append(parts, m.Kernel)
	}
	if m.Go != "" {
		parts = append(parts, strings.TrimPrefix(m.Go, "go version "))
	}
	s := fmt.Sprintf("%d CPUs", m.CPUs)
	if m.CPUs == 0 {
		s = "a machine not recorded"
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// RenderRecords writes the records alone, each with its area's targets: what a run prints.
func RenderRecords(res *Results) string {
	var b strings.Builder
	for _, rec := range res.Records {
		fmt.Fprintf(&b, "## %s\n\n", area(rec.Area).Title)
		var rows []string
		for _, t := range Targets {
			if t.Area == rec.Area {
				st := t.Check(res)
				rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", t.What, st.Goal, cell(st.Measured), cell(st.Baseline), st.Verdict))
			}
		}
		if len(rows) > 0 {
			b.WriteString("| target | goal | measured | baseline, same run | |\n|---|---|---|---|---|\n")
			b.WriteString(strings.Join(rows, "") + "\n")
		}
		renderRecord(&b, rec)
	}
	return b.String()
}
