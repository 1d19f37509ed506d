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
	indexer *exec.Cmd
	exited  chan struct{}
	url     string
	q       *server
	Setup   time.Duration // spawn of the indexer to the index holding the first scan
	Status  query.Status
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

func startSplit(ctx context.Context, bin, root, data string, log io.Writer) (*split, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	sp := &split{url: "nats://" + addr, exited: make(chan struct{})}
	start := time.Now()
	sp.indexer = exec.Command(indexerBin(bin), "--root", root, "--data", filepath.Join(data, "nats"), "--listen", addr)
	sp.indexer.Stderr = log
	sp.indexer.Stdout = log
	if err := sp.indexer.Start(); err != nil {
		return nil, err
	}
	go func() { _ = sp.indexer.Wait(); close(sp.exited) }()
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-sp.exited:
			return nil, fmt.Errorf("indexer exited before listening on %s", addr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(start) > time.Minute {
			sp.close()
			return nil, fmt.Errorf("indexer not listening on %s after a minute", addr)
		}
	}
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
	if sp.indexer != nil && sp.indexer.Process != nil {
		_ = sp.indexer.Process.Signal(syscall.SIGTERM)
		select {
		case <-sp.exited:
		case <-time.After(15 * time.Second):
			_ = sp.indexer.Process.Kill()
			<-sp.exited
		}
	}
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
