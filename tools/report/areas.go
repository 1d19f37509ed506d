package report

import (
	"embed"
	"slices"
	"strings"
)

// Area is one part of BENCHMARKS.md: a record of BENCHMARKS.json, its section of figures
// and its section on how it is measured (measured/KEY.md).
type Area struct {
	Key   string // the record's area
	Title string // its section's heading
	Run   string // the command that measures it alone
}

// Areas is every area, in the order of BENCHMARKS.md.
var Areas = []Area{
	{"cold", "Cold index", "go run ./tools/cmd/guide-bench --scenarios cold"},
	{"latency", "View and tree", "go run ./tools/cmd/guide-bench --scenarios latency"},
	{"restart", "Restart", "go run ./tools/cmd/guide-bench --scenarios restart"},
	{"search", "Search", "go run ./tools/cmd/guide-bench --scenarios search"},
	{"content", "get_content", "go run ./tools/cmd/guide-bench --scenarios content"},
	{"web", "Web page", "go run ./tools/cmd/guide-bench --scenarios web"},
	{"fresh", "Freshness", "go run ./tools/cmd/guide-bench --scenarios fresh"},
	{"once", "CI re-scan", "go run ./tools/cmd/guide-bench --scenarios once"},
	{"churn", "Churn", "go run ./tools/cmd/guide-bench --scenarios churn"},
	{"ryw", "Read-your-writes", "go run ./tools/cmd/guide-bench --scenarios ryw"},
	{"clients", "Several clients, one owner", "go run ./tools/cmd/guide-bench --scenarios clients"},
	{"load", "Load", "scripts/bench-load.sh"},
	{"sessions", "Load with session churn", "AREA=sessions scripts/bench-load.sh"},
	{"replica", "Replica catch-up", "go run ./tools/cmd/guide-bench --scenarios replica"},
	{"changes", "Changes", "go run ./tools/cmd/guide-bench --scenarios changes"},
	{"relevance", "Relevance", "go run ./tools/cmd/guide-relevance"},
	{"scale", "Scale", "make bench-scale"},
	{"partitions", "Partitions", "make bench-partitions"},
}

//go:embed measured/*.md
var measured embed.FS

// how is the text of an area's section on how it is measured ("common" for what every
// area shares).
func how(key string) string {
	b, err := measured.ReadFile("measured/" + key + ".md")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// areaIndex orders records as Areas; unknown areas go last.
func areaIndex(key string) int {
	i := slices.IndexFunc(Areas, func(a Area) bool { return a.Key == key })
	if i < 0 {
		return len(Areas)
	}
	return i
}

// area returns the area of a key; an unknown key is its own title.
func area(key string) Area {
	if i := areaIndex(key); i < len(Areas) {
		return Areas[i]
	}
	return Area{Key: key, Title: key}
}

// Anchor is the fragment GitHub gives a heading: lower case, spaces as hyphens, other
// punctuation dropped.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// HowHeading is the heading of an area's section on how it is measured.
func (a Area) HowHeading() string { return a.Title + ", how measured" }
