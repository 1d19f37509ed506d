package soak

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// proc is one of the product's processes, started from its built binary, killed with
// SIGKILL and started again with the same arguments, so that it finds its data where it
// left it.
type proc struct {
	name string
	bin  string
	args []string
	addr string // the loopback address it listens on; started means it accepts connections
	log  io.Writer

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	killed *atomic.Bool // set before the soak ends the process, so that its exit is expected
	starts int

	errMu   sync.Mutex
	lastErr string   // the last error line the process logged
	exits   []string // exits the soak did not cause
}

// noteLine remembers the process's last error line.
func (p *proc) noteLine(line string) {
	if strings.Contains(line, "level=ERROR") {
		p.errMu.Lock()
		p.lastErr = line
		p.errMu.Unlock()
	}
}

// died reports the exits the soak did not cause since the last call: the process
// stopped on its own.
func (p *proc) died() []string {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	out := p.exits
	p.exits = nil
	return out
}

// start runs the process and waits until it accepts connections on its address.
func (p *proc) start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a Ctrl-C of the soak is not theirs
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	killed := &atomic.Bool{}
	go func() {
		err := cmd.Wait()
		if !killed.Load() {
			p.errMu.Lock()
			p.exits = append(p.exits, fmt.Sprintf("%s exited on its own (%v); its last error: %s", p.name, err, p.lastErr))
			p.errMu.Unlock()
		}
		close(exited)
	}()
	p.cmd, p.exited, p.killed = cmd, exited, killed
	p.starts++
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := net.DialTimeout("tcp", p.addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before listening on %s (see its log)", p.name, p.addr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening on %s after 2 minutes", p.name, p.addr)
		}
	}
}

// kill ends the process with SIGKILL and waits for it to be gone.
func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	p.killed.Store(true)
	_ = p.cmd.Process.Kill()
	<-p.exited
	p.cmd = nil
}

// stop ends the process with SIGTERM, then SIGKILL after a while.
func (p *proc) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	p.killed.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.cmd = nil
}

// running says whether the process is up: started, and neither killed nor exited.
func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// freeAddr asks the kernel for a free loopback port.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// deployment is guide in split mode: the indexer with its embedded NATS server on a
// loopback port, and one query process serving MCP over HTTP on another; beside it, an
// all-in-one process (guide-mcp --root) watching the same root, whose answers must read
// the writes made before each call (readYourWrites).
type deployment struct {
	indexer, query *proc
	allInOne       *proc
	natsURL        string
	mcpURL         string
	metricsURL     string
	allInOneURL    string
}

func newDeployment(binDir, root, data, project string, sessionTTL time.Duration, log io.Writer) (*deployment, error) {
	natsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	httpAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	ownAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	d := &deployment{natsURL: "nats://" + natsAddr, mcpURL: "http://" + httpAddr + "/mcp", metricsURL: "http://" + httpAddr + "/metrics",
		allInOneURL: "http://" + ownAddr + "/mcp"}
	d.indexer = &proc{name: "indexer", bin: filepath.Join(binDir, "indexer"), addr: natsAddr,
		// The safety rescan is pushed past the run, so that what the watcher misses shows.
		args: []string{"--root", root, "--project", project, "--data", filepath.Join(data, "nats"), "--listen", natsAddr,
			"--interval", "1h", "--log-level", "warn"}}
	d.query = &proc{name: "guide-mcp", bin: filepath.Join(binDir, "guide-mcp"), addr: httpAddr,
		args: []string{"--nats", d.natsURL, "--project", project, "--data", filepath.Join(data, "query"), "--http", httpAddr,
			"--session-ttl", sessionTTL.String(), "--log-level", "warn"}}
	// A bound far above any wait of a healthy process: an answer that says it is partial
	// is counted, one that misses a change and does not say so fails the soak. Its data
	// directory is beside the others, off the disk the disk-full phase fills.
	d.allInOne = &proc{name: "guide-mcp --root", bin: filepath.Join(binDir, "guide-mcp"), addr: ownAddr,
		args: []string{"--root", root, "--data", filepath.Join(filepath.Dir(data), "allinone"), "--http", ownAddr, "--interval", "1h",
			"--sync-wait", "10s", "--log-level", "warn"}}
	for _, p := range []*proc{d.indexer, d.query, d.allInOne} {
		p.log = prefixed(log, p.name, p.noteLine)
		if _, err := os.Stat(p.bin); err != nil {
			return nil, fmt.Errorf("%s: %w (run make build)", p.bin, err)
		}
	}
	return d, nil
}

func (d *deployment) close() {
	d.allInOne.stop()
	d.query.stop()
	d.indexer.stop()
}

// scrape reads the named figures of the query process's /metrics.
func (d *deployment) scrape(ctx context.Context, names ...string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", d.metricsURL, nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("metrics: %s", res.Status)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if ok && want[name] {
			out[name], _ = strconv.ParseFloat(val, 64)
		}
	}
	return out, sc.Err()
}

// prefixed writes each line of a process's log with its name in front.
func prefixed(w io.Writer, name string, note func(string)) io.Writer {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			note(sc.Text())
			fmt.Fprintf(w, "%s %s: %s\n", time.Now().UTC().Format("15:04:05.000"), name, sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return pw
}
