package cpuprofile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestStartStop(t *testing.T) {
	p, err := Start("")
	if p != nil || err != nil {
		t.Fatalf(`Start(""): %v, %v; want nothing written`, p, err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop of none: %v", err)
	}
	path := filepath.Join(t.TempDir(), "cpu.prof")
	if p, err = Start(path); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) { // pprof's format is gzipped
		t.Fatalf("the profile is %d bytes, not gzipped", len(b))
	}
	if _, err := Start(filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.prof")); err == nil {
		t.Fatal("a profile in a missing folder: no error")
	}
}
