// Package damage damages files the way disks, crashes and people do — cut short, scribbled
// over, zeroed, deleted — for the tests and the soak that prove a damaged data directory
// never gives a wrong answer.
package damage

import (
	"fmt"
	"math/rand/v2"
	"os"
)

// Kind is a way a file is damaged.
type Kind string

// The kinds of damage.
const (
	Truncate Kind = "truncate" // cut to a part of its length (a lost write, a full disk)
	Scribble Kind = "scribble" // random bytes written over it, a run every few kilobytes
	Zero     Kind = "zero"     // every byte zero, the length kept (a sector that read back as zeros)
	Delete   Kind = "delete"   // removed
)

// Kinds are all kinds of damage, in a fixed order.
var Kinds = []Kind{Truncate, Scribble, Zero, Delete}

// ScribbleEvery and ScribbleRun: Scribble writes ScribbleRun random bytes every ScribbleEvery.
const (
	ScribbleEvery = 4 << 10
	ScribbleRun   = 32
)

// File damages the file at path in the way k says, with rng choosing where and what.
func File(path string, k Kind, rng *rand.Rand) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	size := fi.Size()
	switch k {
	case Delete:
		return os.Remove(path)
	case Truncate:
		// Somewhere in its first three quarters; an empty file stays empty.
		return os.Truncate(path, rng.Int64N(size*3/4+1))
	case Zero:
		return writeAt(path, make([]byte, size), 0)
	case Scribble:
		if size == 0 {
			return nil
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		buf := make([]byte, ScribbleRun)
		// The first run lands in the first kilobytes, where headers are; the rest anywhere
		// in each stretch.
		for at := int64(0); at < size; at += ScribbleEvery {
			off := at + rng.Int64N(min(ScribbleEvery, size-at))
			for i := range buf {
				buf[i] = byte(rng.UintN(256))
			}
			n := min(int64(len(buf)), size-off)
			if _, err := f.WriteAt(buf[:n], off); err != nil {
				return err
			}
		}
		return f.Sync()
	}
	return fmt.Errorf("unknown damage %q", k)
}

func writeAt(path string, b []byte, off int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(b, off); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
