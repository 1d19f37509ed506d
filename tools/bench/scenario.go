package bench

import (
	"fmt"
	"slices"
	"strings"
)

// Scenario names, as --scenarios takes them. cold, latency and restart run on every
// corpus of --sizes (and GOROOT); the others choose their corpus themselves.
const (
	ScenarioCold    = "cold"    // cold index of every corpus, beside walk-read-hash and rg
	ScenarioLatency = "latency" // view and tree latency, beside direct reads and the reference server
	ScenarioRestart = "restart" // restart to first answer
	ScenarioSearch  = "search"  // search vs rg -l -w -i, index size, indexing throughput
	ScenarioContent = "content" // get_content of 10 documents vs the reference server
	ScenarioFresh   = "fresh"   // split mode: a saved file to view and search
	ScenarioOnce    = "once"    // indexer --once with nothing changed
	ScenarioChurn   = "churn"   // split mode: sustained writes, lag sampled
	ScenarioWeb     = "web"     // the web page: each kind of page's answer time
	ScenarioClients = "clients" // several stdio clients of one owner: spawn, memory, the owner killed
	ScenarioReplica = "replica" // a new replica catching up: the projection package's benchmark
	ScenarioRYW     = "ryw"     // read-your-writes: what the sync adds through the stdio bridge
	ScenarioChanges = "changes" // the changes tool's answer of 1,000 changes: the query package's benchmark
	// ScenarioScale is opt-in (not in "all" or the default run): 10k, 100k and 1M generated
	// documents, each indexed from empty, for time to searchable, RSS, disk and search.
	ScenarioScale = "scale"
	// ScenarioPartitions is opt-in: a stream of 4 partitions, a whole replica and one of
	// each partition, for size, memory, catch-up and search through the fan-out.
	ScenarioPartitions = "partitions"
)

// AllScenarios is every scenario, in the order they run.
var AllScenarios = []string{ScenarioCold, ScenarioLatency, ScenarioRestart, ScenarioSearch,
	ScenarioContent, ScenarioWeb, ScenarioFresh, ScenarioOnce, ScenarioClients, ScenarioChurn, ScenarioReplica, ScenarioRYW, ScenarioChanges}

// OptInScenarios run only when named: they take too long for every run.
var OptInScenarios = []string{ScenarioScale, ScenarioPartitions}

// ParseScenarios reads a comma-separated list of scenario names; "all" is every one but
// the opt-in ones.
func ParseScenarios(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			continue
		case name == "all":
			out = append(out, AllScenarios...)
		case slices.Contains(AllScenarios, name), slices.Contains(OptInScenarios, name):
			out = append(out, name)
		default:
			return nil, fmt.Errorf("unknown scenario %q (known: %s; opt-in: %s)", name, strings.Join(AllScenarios, ", "), strings.Join(OptInScenarios, ", "))
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario in %q", s)
	}
	return out, nil
}

// has reports whether the run includes any of the scenarios; no list means all but the
// opt-in ones.
func (c *Config) has(names ...string) bool {
	for _, n := range names {
		if len(c.Scenarios) == 0 && !slices.Contains(OptInScenarios, n) {
			return true
		}
		if slices.Contains(c.Scenarios, n) {
			return true
		}
	}
	return false
}
