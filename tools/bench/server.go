package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/tools/report"
)

// server is an MCP server process driven by mcp-go's stdio client, the way a desktop MCP
// client runs one. guide-mcp --root on stdio is a bridge to the project's owner daemon,
// which holds the index: the server's memory is the owner's, and stopping or killing the
// server stops or kills the owner too, so that each measure starts from what it says.
type server struct {
	c       *client.Client
	cmd     *exec.Cmd
	data    string    // guide-mcp --root: the project's data directory, where the owner is found
	started time.Time // when a cold run spawned it
}

// spawn starts command with args and initializes an MCP session over its stdio. The
// server's stderr goes to log.
func spawn(ctx context.Context, log io.Writer, command string, args ...string) (*server, error) {
	s := &server{}
	if slices.Contains(args, "--root") {
		if i := slices.Index(args, "--data"); i >= 0 && i+1 < len(args) {
			s.data = args[i+1]
		}
	}
	c, err := client.NewStdioMCPClientWithOptions(command, nil, args,
		transport.WithCommandFunc(func(_ context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.Command(command, args...)
			cmd.Env = append(os.Environ(), env...)
			cmd.Stderr = log
			s.cmd = cmd
			return cmd, nil
		}))
	if err != nil {
		return nil, err
	}
	s.c = c
	if err := c.Start(ctx); err != nil {
		s.kill()
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "guide-bench", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		s.kill()
		return nil, fmt.Errorf("initialize %s: %w", command, err)
	}
	return s, nil
}

// call calls a tool and returns its text, or an error for a tool error.
func (s *server) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return b.String(), fmt.Errorf("%s(%v): tool error: %.200s", tool, args, b.String())
	}
	return b.String(), nil
}

// catalogCaughtUp reports whether the catalog holds everything of the first scan the
// stream held when the status was read. (The status's lag is the largest of every
// projection's, the search index's too, so it is not read here.)
func catalogCaughtUp(st query.Status) bool {
	return st.InitialScanDone && st.StreamLastSeq > 0 && st.AppliedSeq >= st.StreamLastSeq
}

// searchable reports whether both the catalog and the full-text index hold everything the
// stream held when the status was read.
func searchable(st query.Status) bool {
	return catalogCaughtUp(st) && st.Lag == 0 && st.Index != nil && st.Index.AppliedSeq >= st.StreamLastSeq
}

// indexSeq is the full-text index's applied sequence, 0 when it reports none.
func indexSeq(st query.Status) uint64 {
	if st.Index == nil {
		return 0
	}
	return st.Index.AppliedSeq
}

func (s *server) status(ctx context.Context) (query.Status, error) {
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "guide://_status"
	res, err := s.c.ReadResource(ctx, req)
	if err != nil {
		return query.Status{}, err
	}
	var st query.Status
	for _, c := range res.Contents {
		if tc, ok := c.(mcp.TextResourceContents); ok {
			err = json.Unmarshal([]byte(tc.Text), &st)
		}
	}
	return st, err
}

// waitIndexed polls the status resource until the catalog holds the whole first scan.
func (s *server) waitIndexed(ctx context.Context) (query.Status, error) {
	for {
		st, err := s.status(ctx)
		if err != nil {
			return st, err
		}
		if st.InitialScanDone && st.Lag == 0 && st.StreamLastSeq > 0 && st.AppliedSeq >= st.StreamLastSeq {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("waiting for the first scan: %w (last status %+v)", ctx.Err(), st)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// waitSearchable polls the status resource every poll until the catalog and the index
// have applied the whole stream, and returns when the catalog got there first.
func (s *server) waitSearchable(ctx context.Context, poll time.Duration) (st query.Status, catalog time.Duration, err error) {
	start := time.Now()
	for {
		st, err = s.status(ctx)
		if err != nil {
			return st, catalog, err
		}
		if catalog == 0 && catalogCaughtUp(st) {
			catalog = time.Since(start)
		}
		if searchable(st) {
			return st, catalog, nil
		}
		select {
		case <-ctx.Done():
			return st, catalog, fmt.Errorf("waiting for the index: %w (last status %+v)", ctx.Err(), st)
		case <-time.After(poll):
		}
	}
}

// mergeWait bounds waitMerged: a first index of a million documents took from 90 s to
// over ten minutes to merge on 2 cores (the longer on a fuller disk), after the five idle
// seconds the index waits for.
const mergeWait = 10 * time.Minute

// waitMerged waits until the search index, idle after its first index, has merged its
// segments (guide://_status index.merged: one segment per tier, three or four of them), or
// mergeWait has passed, and returns how long it waited, how many segments the index is in
// (-1 if the status never said) and whether it had merged.
func (s *server) waitMerged(ctx context.Context) (time.Duration, int, bool) {
	start := time.Now()
	segments, merged := -1, false
	for time.Since(start) < mergeWait {
		st, err := s.status(ctx)
		if err == nil && st.Index != nil {
			segments, merged = st.Index.Segments, st.Index.Merged
		}
		if err != nil || merged {
			break
		}
		select {
		case <-ctx.Done():
			return time.Since(start), segments, merged
		case <-time.After(200 * time.Millisecond):
		}
	}
	return time.Since(start), segments, merged
}

// mergedNote says when searches were timed: once the index had merged, or with how many
// segments left when waitMerged gave up (-1: the status never said).
func mergedNote(wait time.Duration, segments int, merged bool) string {
	switch {
	case merged:
		return fmt.Sprintf("searches timed once the idle index had merged its segments (%d), %s later", segments, report.FormatDuration(wait))
	case segments < 0:
		return fmt.Sprintf("searches timed after waiting %s for the idle index to merge; the status did not say its segments", report.FormatDuration(wait))
	}
	return fmt.Sprintf("searches timed with %d segments left, not merged after waiting %s", segments, report.FormatDuration(wait))
}

// memory reads the process's resident set and its peak, in bytes.
func (s *server) memory() (rss, peak int64, err error) {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0, 0, errors.New("no process")
	}
	pid := s.cmd.Process.Pid
	if s.data != "" {
		r, err := owner.Read(s.data)
		if err != nil {
			return 0, 0, fmt.Errorf("the owner's record: %w", err)
		}
		pid = r.PID
	}
	return memoryOf(pid)
}

// memoryOf reads a process's resident set and its peak, in bytes.
func memoryOf(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v)
		if len(f) < 1 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		if k == "VmRSS" {
			rss = n << 10
		} else {
			peak = n << 10
		}
	}
	return rss, peak, nil
}

// stop ends the session the way a client does: it closes stdin and waits; then it stops
// the owner (SIGTERM) and waits until it has released the project.
func (s *server) stop() {
	_ = s.c.Close()
	s.endOwner(syscall.SIGTERM)
}

// kill ends the process with SIGKILL, then releases the client; the owner is killed too.
func (s *server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	if s.c != nil {
		_ = s.c.Close()
	}
	s.endOwner(syscall.SIGKILL)
}

// endOwner sends sig to the project's owner and waits until the project is free.
func (s *server) endOwner(sig syscall.Signal) {
	if s.data == "" {
		return
	}
	// An owner publishes its record once its NATS server is up, which can be after it has
	// answered a restart's first call: until then the record names the owner before it,
	// gone (or not reaped yet). Signal each live process the record names, once.
	signalled := 0
	for deadline := time.Now().Add(time.Minute); owner.Held(s.data) && time.Now().Before(deadline); {
		if r, err := owner.Read(s.data); err == nil && r.PID != signalled && syscall.Kill(r.PID, 0) == nil {
			_ = syscall.Kill(r.PID, sig)
			signalled = r.PID
		}
		time.Sleep(10 * time.Millisecond) // polling the lock: a process that holds none has nothing to wait on
	}
}
