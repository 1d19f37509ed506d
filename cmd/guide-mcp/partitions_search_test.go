package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
	gencorpus "github.com/guide/guide/tools/corpus"
)

// replica is a guide-mcp following the stream, that a test may kill.
type replica struct {
	*Main
	c    *client.Client
	kill func()
}

// startReplica starts a replica in-process; kill ends it as a crash would: its NATS
// connection closes first, with whatever requests it was answering.
func startReplica(t *testing.T, url string, args ...string) *replica {
	t.Helper()
	m := &Main{Logger: testkit.Logger(), Stdin: eternal{}, Stdout: os.Stderr}
	testkit.NoErr(t, m.ParseFlags(append([]string{"--nats", url, "--data", t.TempDir(), "--http", "127.0.0.1:0"}, args...)), "flags")
	end := run(t, m)
	var once sync.Once
	r := &replica{Main: m}
	r.kill = func() {
		once.Do(func() {
			m.mu.Lock()
			b := m.broker
			m.mu.Unlock()
			if b != nil {
				b.Conn.Close()
			}
			_ = end()
		})
	}
	t.Cleanup(r.kill)
	r.c = httpClient(t, m)
	testkit.WaitCaughtUp(t, r.c)
	if m.partsOut != nil {
		testkit.Eventually(t, 30*time.Second, func() (bool, string) { return m.partsOut.Serving(), "partitions not served" })
	}
	return r
}

// partitionedTree is a tree of a hundred-odd documents on a stream of p partitions.
func partitionedTree(t *testing.T, url string, p int) (root string) {
	t.Helper()
	root = testkit.CopyTree(t, "../../testdata/sample")
	_, err := gencorpus.Generate(filepath.Join(root, "gen"), gencorpus.Options{Docs: 120, Seed: 35})
	testkit.NoErr(t, err, "generate")
	partitionedStream(t, url, root, p)
	return root
}

// searchPages returns the text of every page of a search, up to a few.
func searchPages(t *testing.T, c *client.Client, q string) string {
	t.Helper()
	var b strings.Builder
	cursor := ""
	for range 4 {
		args := map[string]any{"query": q, "limit": 5}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res := testkit.Call(t, c, "search", args)
		text := testkit.Text(t, res)
		fmt.Fprintf(&b, "error %v: %s\n", res.IsError, text)
		var page struct {
			Next string `json:"next_cursor"`
		}
		_ = json.Unmarshal([]byte(text), &page)
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	return b.String()
}

var partitionQueries = []string{"dragon", "kael stormborn", `"brass compass"`, "code review", "magic system rules",
	"release", "cache timeout", "dragn", "zzqxnotaword"}

// TestPartitionedReplicasSearchAsOne: four replicas, one for each of four partitions, and
// two of two partitions each, each answer search for the whole project: every page (hits, order, scores, snippets from
// other partitions' bodies, cursors) is the same as a whole replica's; view and
// get_content of a document another partition holds are fetched from it.
func TestPartitionedReplicasSearchAsOne(t *testing.T) {
	ns := testkit.NATSListening(t)
	url := ns.ClientURL()
	partitionedTree(t, url, 4)
	whole := startReplica(t, url)
	var parts []*replica
	for k := range 4 {
		parts = append(parts, startReplica(t, url, "--partitions", fmt.Sprint(k)))
	}
	// Replicas of two partitions each, sharing the partitions' requests with those of one.
	parts = append(parts, startReplica(t, url, "--partitions", "0,1"), startReplica(t, url, "--partitions", "2,3"))
	for _, q := range partitionQueries {
		want := searchPages(t, whole.c, q)
		if !strings.Contains(want, `"path"`) && !strings.HasPrefix(q, "zz") {
			t.Errorf("%q finds nothing: the corpus does not test it", q)
		}
		for k, p := range parts {
			if got := searchPages(t, p.c, q); got != want {
				t.Errorf("%q on the replica of %s:\n%s", q, parts[k].parts.String(), firstLineDiff(want, got))
			}
		}
	}
	// A document of partition 0, read on the replica of partition 1.
	var doc string
	for _, p := range []string{"Characters/Elara.md", "Characters/Kael Stormborn.md", "README.md", "guidelines/code-review.md",
		"Worldbuilding/magic-system.md", "Worldbuilding/Creatures/Dragons.md", "Plot/Outlines/act-one.md"} {
		if events.PartitionOf(events.DocKey{Path: p}, 4) != 1 {
			doc = p
			break
		}
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"view", map[string]any{"path": doc}}, {"get_content", map[string]any{"category_or_collection": "all"}},
		{"get_content", map[string]any{"category_or_collection": "guidelines"}}} {
		want := testkit.Call(t, whole.c, call.tool, call.args)
		got := testkit.Call(t, parts[1].c, call.tool, call.args)
		if want.IsError || got.IsError || testkit.Text(t, got) != testkit.Text(t, want) {
			t.Errorf("%s(%v) on partition 1's replica (error %v, whole's %v):\n%s", call.tool, call.args, got.IsError, want.IsError,
				firstLineDiff(testkit.Text(t, want), testkit.Text(t, got)))
		}
	}
}

// TestPartitionWithNoReplicaAnswersPartial: with no live replica of a partition, a search
// answers from the others, marked partial with the partition and its documents, never
// an error; a replica of it started on an empty disk catches up that partition alone, and
// the answer is whole again.
func TestPartitionWithNoReplicaAnswersPartial(t *testing.T) {
	ns := testkit.NATSListening(t)
	url := ns.ClientURL()
	root := partitionedTree(t, url, 2)
	front := startReplica(t, url, "--partitions", "0")
	other := startReplica(t, url, "--partitions", "1")
	inOne := 0
	for p := range testkit.Disk(t, root) {
		if events.PartitionOf(events.DocKey{Path: p}, 2) == 1 {
			inOne++
		}
	}
	before := searchPages(t, front.c, "the release")
	other.kill()
	res := testkit.Call(t, front.c, "search", map[string]any{"query": "the release"})
	var got struct {
		Hits    []struct{ Path string } `json:"hits"`
		Partial *struct {
			Partitions []int `json:"missing_partitions"`
			Documents  int   `json:"missing_documents"`
			Note       string
		} `json:"partial"`
	}
	testkit.NoErr(t, json.Unmarshal([]byte(testkit.Text(t, res)), &got), "decode")
	if res.IsError || got.Partial == nil || !slices.Equal(got.Partial.Partitions, []int{1}) || got.Partial.Documents != inOne {
		t.Fatalf("partition 1 down (%d documents): error %v, %s", inOne, res.IsError, testkit.Text(t, res))
	}
	for _, h := range got.Hits {
		if events.PartitionOf(events.DocKey{Path: h.Path}, 2) != 0 {
			t.Errorf("a hit of the partition that is down: %s", h.Path)
		}
	}
	// A replica of partition 1 on an empty disk catches up that partition alone.
	back := startReplica(t, url, "--partitions", "1")
	testkit.Equal(t, back.index.State().Documents, uint64(inOne), "documents in the index of the new replica of partition 1")
	testkit.Equal(t, searchPages(t, front.c, "the release"), before, "the search once partition 1 has a replica again")
}

// TestPartitionReplicaKilledDuringSearches: two replicas of each of two partitions; one is
// killed while searches run: no call fails, none is partial, every answer is the same.
func TestPartitionReplicaKilledDuringSearches(t *testing.T) {
	ns := testkit.NATSListening(t)
	url := ns.ClientURL()
	partitionedTree(t, url, 2)
	front := startReplica(t, url, "--partitions", "0")
	startReplica(t, url, "--partitions", "0")
	a := startReplica(t, url, "--partitions", "1")
	startReplica(t, url, "--partitions", "1")
	queries := map[string]string{}
	for _, q := range partitionQueries[:5] {
		queries[q] = searchPages(t, front.c, q)
	}
	var calls atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := slices.Sorted(maps.Keys(queries))[i%len(queries)]
				if got := searchPages(t, front.c, q); got != queries[q] {
					t.Errorf("%q during the kill:\n%s", q, firstLineDiff(queries[q], got))
				}
				calls.Add(1)
			}
		})
	}
	testkit.Eventually(t, 30*time.Second, func() (bool, string) { return calls.Load() >= 6, "searches before the kill" })
	a.kill()
	after := calls.Load()
	testkit.Eventually(t, 60*time.Second, func() (bool, string) { return calls.Load() >= after+12, "searches after the kill" })
	close(stop)
	wg.Wait()
}

// firstLineDiff shows the first line where two texts differ.
func firstLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d\nwant: %s\ngot:  %s", i+1, wl, gl)
		}
	}
	return "no difference"
}

// TestPartitionWithNoReplicaViewAndContentPartial: with no live replica of a partition,
// view of one of its documents answers the metadata marked partial, naming the partition,
// and get_content answers the documents of the others, naming those left out; never an
// error.
func TestPartitionWithNoReplicaViewAndContentPartial(t *testing.T) {
	ns := testkit.NATSListening(t)
	url := ns.ClientURL()
	root := partitionedTree(t, url, 2)
	front := startReplica(t, url, "--partitions", "0")
	other := startReplica(t, url, "--partitions", "1")
	var doc string
	for _, p := range slices.Sorted(maps.Keys(testkit.Disk(t, root))) {
		if strings.HasSuffix(p, ".md") && events.PartitionOf(events.DocKey{Path: p}, 2) == 1 {
			doc = p
			break
		}
	}
	// (Not read before: a body fetched once is kept, and would be answered from there.)
	other.kill()

	res := testkit.Call(t, front.c, "view", map[string]any{"path": doc})
	var v struct {
		Path    string `json:"path"`
		Title   string `json:"title"`
		Partial *struct {
			Partitions []int    `json:"missing_partitions"`
			Documents  []string `json:"missing_documents"`
		} `json:"partial"`
	}
	testkit.NoErr(t, json.Unmarshal([]byte(testkit.Text(t, res)), &v), "decode "+testkit.Text(t, res))
	if res.IsError || v.Path != doc || v.Partial == nil || !slices.Equal(v.Partial.Partitions, []int{1}) || !slices.Equal(v.Partial.Documents, []string{doc}) {
		t.Errorf("view(%s) with partition 1 down: error %v, %s", doc, res.IsError, testkit.Text(t, res))
	}

	res = testkit.Call(t, front.c, "get_content", map[string]any{"category_or_collection": "all"})
	var c struct {
		Success bool   `json:"success"`
		Value   string `json:"value"`
		Message string `json:"message"`
		Partial *struct {
			Partitions []int    `json:"missing_partitions"`
			Documents  []string `json:"missing_documents"`
		} `json:"partial"`
	}
	testkit.NoErr(t, json.Unmarshal([]byte(testkit.Text(t, res)), &c), "decode "+testkit.Text(t, res))
	if res.IsError || !c.Success || c.Partial == nil || !slices.Equal(c.Partial.Partitions, []int{1}) || !strings.Contains(c.Message, "partition [1]") {
		t.Fatalf("get_content(all) with partition 1 down: error %v, %.600s", res.IsError, testkit.Text(t, res))
	}
	for _, p := range c.Partial.Documents {
		if events.PartitionOf(events.DocKey{Path: p}, 2) != 1 {
			t.Errorf("left out, but partition 0 keeps it: %s", p)
		}
	}
	if c.Value == "" {
		t.Errorf("get_content(all) with partition 1 down returned nothing of partition 0")
	}
}

// TestPartitionBodyLargerThanAMessage: a document larger than one NATS message holds once
// encoded (the embedded server's max_payload is 8 MiB; the body travels as base64) is
// read on the replica of another partition whole, fetched in pieces.
func TestPartitionBodyLargerThanAMessage(t *testing.T) {
	ns := testkit.NATSListening(t)
	url := ns.ClientURL()
	root := testkit.CopyTree(t, "../../testdata/sample")
	name := ""
	for i := 0; name == ""; i++ {
		if p := fmt.Sprintf("big/large-%d.md", i); events.PartitionOf(events.DocKey{Path: p}, 2) == 1 {
			name = p
		}
	}
	var b strings.Builder
	b.WriteString("# A large document\n\n")
	for i := 0; b.Len() < 6800<<10; i++ {
		fmt.Fprintf(&b, "Line %d of the large document, with words like quartz%d and meridian.\n", i, i%997)
	}
	big := b.String()
	testkit.NoErr(t, os.MkdirAll(filepath.Join(root, "big"), 0o755), "mkdir")
	testkit.NoErr(t, os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(big), 0o644), "write")
	partitionedStream(t, url, root, 2)
	front := startReplica(t, url, "--partitions", "0")
	startReplica(t, url, "--partitions", "1")
	res := testkit.Call(t, front.c, "view", map[string]any{"path": name})
	var v struct {
		Chars   int             `json:"chars"`
		Content string          `json:"content"`
		Partial json.RawMessage `json:"partial"`
	}
	testkit.NoErr(t, json.Unmarshal([]byte(testkit.Text(t, res)), &v), "decode")
	if res.IsError || v.Partial != nil || v.Chars != len(big) || !strings.HasPrefix(big, v.Content) || v.Content == "" {
		t.Errorf("view(%s) of %d bytes on the replica of partition 0: error %v, %d chars, partial %s", name, len(big), res.IsError, v.Chars, v.Partial)
	}
}

// TestOverlappingPartitionReplicasSearchAsOne: replicas whose sets of partitions overlap
// — {0,1}, {1,2}, {0} and {3} of four — each answer search for the whole project, the
// same pages as a whole replica's, none partial. Partition 2 has one replica, of {1,2}:
// the replica of {0,1} answers for 0 and 1 from its own index, and {1,2}'s answer covers 1
// again, so no choice of the answers to a partition's request covers every partition
// once; the cover of live sets that do not overlap ({0}, {1,2}, {3}) does.
func TestOverlappingPartitionReplicasSearchAsOne(t *testing.T) {
	ns := testkit.NATSListening(t)
	url := ns.ClientURL()
	partitionedTree(t, url, 4)
	whole := startReplica(t, url)
	var parts []*replica
	for _, set := range []string{"0,1", "1,2", "0", "3"} {
		parts = append(parts, startReplica(t, url, "--partitions", set))
	}
	for _, q := range partitionQueries {
		want := searchPages(t, whole.c, q)
		for _, p := range parts {
			if got := searchPages(t, p.c, q); got != want {
				t.Errorf("%q on the replica of %s:\n%s", q, p.parts.String(), firstLineDiff(want, got))
			}
		}
	}
}
