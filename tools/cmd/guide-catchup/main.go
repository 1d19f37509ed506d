// Command guide-catchup watches a guide-mcp --http catch up and checks that its freshness
// never says more than is true: every --every it reads guide://_status and /healthz, then
// searches for --word in every document, and counts a violation when the status said
// caught up (caught_up, lag 0, or /healthz ready) while the search that followed it said
// its results were partial (the search index behind what view shows). Start it against a
// query process with an empty data directory that follows a stream already holding a
// project, so that the projections really catch up while it polls. It exits 1 on any
// violation.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/tools/soak"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/mcp", "MCP endpoint of a guide-mcp --http")
	every := flag.Duration("every", 20*time.Millisecond, "time between polls")
	word := flag.String("word", "the", "word to search for")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	flag.Parse()
	if err := run(*url, *every, *word, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "guide-catchup:", err)
		os.Exit(1)
	}
}

func run(url string, every time.Duration, word string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := soak.Connect(ctx, url, "guide-catchup")
	if err != nil {
		return err
	}
	defer c.Close()
	healthz := strings.TrimSuffix(url, "/mcp") + "/healthz"
	start := time.Now()
	polls, behind, claimed, violations, settled := 0, 0, 0, 0, 0
	var firstDocs, lastIndexed uint64
	for settled < 10 {
		if ctx.Err() != nil {
			return fmt.Errorf("not caught up after %v (%d polls)", timeout, polls)
		}
		polls++
		st, err := soak.ReadStatus(ctx, c)
		if err != nil {
			return err
		}
		ready := healthy(healthz)
		res, err := search(ctx, c, word)
		if err != nil {
			return err
		}
		says := st.CaughtUp || st.Lag == 0 || ready
		if says {
			claimed++
		}
		if res.Partial != nil {
			behind++
			if firstDocs == 0 {
				firstDocs = uint64(res.Partial.Searchable)
			}
			if says {
				violations++
				fmt.Printf("violation at %v: caught_up %v, lag %d, /healthz ready %v, then search: %s\n",
					time.Since(start).Round(time.Millisecond), st.CaughtUp, st.Lag, ready, res.Partial.Note)
			}
		}
		if st.Index != nil {
			lastIndexed = st.Index.Documents
		}
		if st.CaughtUp && res.Partial == nil && st.Index != nil && st.Index.AppliedSeq >= st.StreamLastSeq {
			settled++
		} else {
			settled = 0
		}
		time.Sleep(every)
	}
	fmt.Printf("%d polls over %v (every %v): %d with the search index behind view (searchable from %d to %d documents), %d where the status said caught up; violations %d\n",
		polls, time.Since(start).Round(time.Millisecond), every, behind, firstDocs, lastIndexed, claimed, violations)
	if violations > 0 {
		return fmt.Errorf("%d violations", violations)
	}
	return nil
}

func healthy(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func search(ctx context.Context, c *client.Client, word string) (query.SearchResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = "search"
	req.Params.Arguments = map[string]any{"query": word, "scope": "all", "limit": 1}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return query.SearchResult{}, err
	}
	var out query.SearchResult
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			if res.IsError {
				return out, fmt.Errorf("search: %s", tc.Text)
			}
			err = json.Unmarshal([]byte(tc.Text), &out)
		}
	}
	return out, err
}
