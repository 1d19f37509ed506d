package bench

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/tools/report"
)

// split is guide in split mode: bin/indexer with its embedded NATS server listening on a
// loopback port, and bin/guide-mcp --nats as a separate process driven over stdio.
type split struct {
	ix     *indexer
	url    string
	q      *server
	Setup  time.Duration // spawn of the indexer to the index holding the first scan
	Status query.Status
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// indexerBin is bin/indexer beside bin/guide-mcp.
func indexerBin(guideMCP string) string { return filepath.Join(filepath.Dir(guideMCP), "indexer") }

// indexer is bin/indexer with its embedded NATS server listening on a loopback port.
type indexer struct {
	cmd    *exec.Cmd
	exited chan struct{}
	url    string
}

// startIndexer starts bin/indexer on root, its store in store, and waits until its NATS
// server listens.
func startIndexer(bin, root, store string, log io.Writer, args ...string) (*indexer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	ix := &indexer{url: "nats://" + addr, exited: make(chan struct{})}
	start := time.Now()
	ix.cmd = exec.Command(indexerBin(bin), append([]string{"--root", root, "--data", store, "--listen", addr}, args...)...)
	ix.cmd.Stderr = log
	ix.cmd.Stdout = log
	if err := ix.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = ix.cmd.Wait(); close(ix.exited) }()
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return ix, nil
		}
		select {
		case <-ix.exited:
			return nil, fmt.Errorf("indexer exited before listening on %s", addr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(start) > time.Minute {
			ix.close()
			return nil, fmt.Errorf("indexer not listening on %s after a minute", addr)
		}
	}
}

// close stops the indexer (SIGTERM), and kills it if it has not ended in 15 s.
func (ix *indexer) close() {
	if ix.cmd == nil || ix.cmd.Process == nil {
		return
	}
	_ = ix.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-ix.exited:
	case <-time.After(15 * time.Second):
		_ = ix.cmd.Process.Kill()
		<-ix.exited
	}
}

func startSplit(ctx context.Context, bin, root, data string, log io.Writer) (*split, error) {
	start := time.Now()
	ix, err := startIndexer(bin, root, filepath.Join(data, "nats"), log)
	if err != nil {
		return nil, err
	}
	sp := &split{ix: ix, url: ix.url}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	sp.q, err = spawn(cctx, log, bin, "--nats", sp.url, "--data", filepath.Join(data, "query"))
	if err != nil {
		sp.close()
		return nil, err
	}
	sp.Status, _, err = sp.q.waitSearchable(cctx, 20*time.Millisecond)
	if err != nil {
		sp.close()
		return nil, err
	}
	sp.Setup = time.Since(start)
	return sp, nil
}

func (sp *split) close() {
	if sp.q != nil {
		sp.q.stop()
	}
	sp.ix.close()
}

// copyTree copies the regular files of src to dst, so that the scenarios that write
// files never touch a stored corpus.
func copyTree(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		t := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(t, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(t, b, 0o644)
	})
}

// plainDocs are the corpus's documents that are not templates.
func plainDocs(c *report.Corpus) []string {
	var out []string
	for _, f := range c.Files {
		if strings.HasSuffix(f, ".md") {
			out = append(out, f)
		}
	}
	return out
}

// stripStamp removes what an earlier sample appended, from marker on.
func stripStamp(b []byte, marker string) []byte {
	if i := strings.Index(string(b), marker); i >= 0 {
		return b[:i]
	}
	return b
}
