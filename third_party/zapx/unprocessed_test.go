package zap

import (
	"bytes"
	"io"
	"testing"
)

// fillCoder encodes a few values for documents spread over several chunks.
func fillCoder(c *chunkedIntCoder) {
	c.Reset()
	for doc := uint64(0); doc < 1000; doc += 7 {
		_ = c.Add(doc, doc, doc*3+1)
	}
	c.Close()
}

// TestChunkedIntCoderWritesUnprocessedDataAsItIs: written through a FileWriter without a
// processor, a coder's output is what it writes to any other writer, and writing it
// allocates nothing (it copied every chunk into a new buffer: every term of every merge).
func TestChunkedIntCoderWritesUnprocessedDataAsItIs(t *testing.T) {
	c := newChunkedIntCoder(64, 1000)
	fillCoder(c)
	var plain bytes.Buffer
	if _, err := c.Write(&plain); err != nil {
		t.Fatal(err)
	}
	fillCoder(c)
	var viaFile bytes.Buffer
	fw := NewFileWriterEmpty(NewCountHashWriter(&viaFile))
	if _, err := c.Write(fw); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain.Bytes(), viaFile.Bytes()) {
		t.Fatalf("through a FileWriter: %d bytes, %x; plain: %d bytes, %x", viaFile.Len(), viaFile.Bytes(), plain.Len(), plain.Bytes())
	}

	discard := NewFileWriterEmpty(NewCountHashWriter(io.Discard))
	fillCoder(c)
	_, _ = c.Write(discard) // buffers grown once
	allocs := testing.AllocsPerRun(100, func() {
		fillCoder(c)
		if _, err := c.Write(discard); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("encoding and writing a coder allocated %.1f times", allocs)
	}
}
