// Command corpus writes a deterministic tree of realistic Markdown documents, for
// benchmarks: `corpus --docs 10000 --out DIR --seed 1`.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/guide/guide/tools/corpus"
)

// Main is the corpus program.
type Main struct {
	Docs int
	Out  string
	Seed uint64

	Stdout io.Writer
}

func main() {
	m := &Main{Stdout: os.Stdout}
	if err := m.ParseFlags(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(2)
	}
	if err := m.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
}

// ParseFlags reads the command line.
func (m *Main) ParseFlags(args []string) error {
	fs := flag.NewFlagSet("corpus", flag.ContinueOnError)
	fs.IntVar(&m.Docs, "docs", 1000, "number of documents")
	fs.StringVar(&m.Out, "out", "", "directory to write (must be empty or absent)")
	fs.Uint64Var(&m.Seed, "seed", 1, "seed: the same seed and count give the same tree")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if m.Out == "" {
		return errors.New("--out is required")
	}
	if m.Docs <= 0 {
		return errors.New("--docs must be positive")
	}
	return nil
}

// Run writes the corpus and prints its statistics as JSON.
func (m *Main) Run() error {
	if ents, err := os.ReadDir(m.Out); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s is not empty", m.Out)
	}
	start := time.Now()
	st, err := corpus.Generate(m.Out, corpus.Options{Docs: m.Docs, Seed: m.Seed})
	if err != nil {
		return err
	}
	out := struct {
		corpus.Stats
		Seed    uint64 `json:"seed"`
		Version int    `json:"generator_version"`
		Millis  int64  `json:"duration_ms"`
	}{st, m.Seed, corpus.Version, time.Since(start).Milliseconds()}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
