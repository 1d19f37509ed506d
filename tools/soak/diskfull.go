package soak

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The disk-full phase: the data directories of both processes (the indexer's NATS store,
// the query process's projections) live on one tmpfs, which a ballast file fills for a
// while as the file-system operations go on; then the ballast goes, and the check at the
// end wants nothing lost, invented or stale. Mounting a tmpfs needs root (CI runs the soak
// as root); elsewhere the phase is skipped, and the report says why.

// dataSize is the tmpfs's size: room for the data of a soak's corpus, and only what the
// ballast takes uses memory.
const dataSize = "512m"

// dataDisk is the tmpfs the data directories live on.
type dataDisk struct {
	dir     string
	ballast string
	full    bool
}

// fill writes the ballast until the disk is full, and returns how much it wrote.
func (d *dataDisk) fill() (int64, error) {
	f, err := os.OpenFile(d.ballast, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	d.full = true
	chunk := make([]byte, 1<<20)
	var n int64
	for {
		w, err := f.Write(chunk)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// free removes the ballast.
func (d *dataDisk) free() error {
	if !d.full {
		return nil
	}
	d.full = false
	return os.Remove(d.ballast)
}

// writeError is guide-mcp's write_error as its status says now.
func writeError(ctx context.Context, url string) string {
	// Bounded: the phase must end on time, whatever the query process is doing. Above the
	// 5 s a new session waits for its record while the stream's store takes no write.
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, err := Connect(ctx, url, "soak-disk-full")
	if err != nil {
		return "status unreadable: " + err.Error()
	}
	defer c.Close()
	st, err := ReadStatus(ctx, c)
	if err != nil {
		return "status unreadable: " + err.Error()
	}
	return st.WriteError
}

// mountData mounts the tmpfs on dir; nil, with the reason, where it cannot.
func mountData(dir string) (*dataDisk, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+dataSize+",mode=0700"); err != nil {
		return nil, fmt.Errorf("cannot mount a tmpfs for the data (run as root): %w", err)
	}
	return &dataDisk{dir: dir, ballast: filepath.Join(dir, "ballast")}, nil
}

// unmount unmounts the tmpfs once the processes are stopped.
func (d *dataDisk) unmount() {
	for range 50 {
		if err := syscall.Unmount(d.dir, 0); err == nil || errors.Is(err, syscall.EINVAL) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Unmount(d.dir, syscall.MNT_DETACH)
}
