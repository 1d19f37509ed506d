// Package profiling writes the profiles a command's --cpuprofile and --memprofile ask for.
package profiling

import (
	"errors"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

// Profile is a CPU profile being written, and the heap profile written on SIGUSR1.
type Profile struct {
	cpu   *os.File
	usr1  chan os.Signal
	done  chan struct{}
	wrote chan error // each heap profile's outcome, for tests; never blocks the writer
}

// Start begins writing a CPU profile of the process to cpuPath, and writes a heap
// profile to heapPath each time the process receives SIGUSR1 (`kill -USR1 <pid>`): what
// is live after a collection, and what was allocated since the start. "" writes none;
// nothing to write gives a nil Profile, which Stop accepts.
func Start(cpuPath, heapPath string) (*Profile, error) {
	if cpuPath == "" && heapPath == "" {
		return nil, nil
	}
	p := &Profile{wrote: make(chan error, 1)}
	if heapPath != "" {
		// Fail now, not at the signal, on a path that cannot be written.
		if err := writeHeap(heapPath); err != nil {
			return nil, err
		}
	}
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, errors.Join(err, f.Close())
		}
		p.cpu = f
	}
	if heapPath != "" {
		p.usr1, p.done = make(chan os.Signal, 1), make(chan struct{})
		signal.Notify(p.usr1, syscall.SIGUSR1)
		go func() {
			for {
				select {
				case <-p.done:
					return
				case <-p.usr1:
					err := writeHeap(heapPath)
					select {
					case p.wrote <- err:
					default:
					}
				}
			}
		}()
	}
	return p, nil
}

// Stop ends the CPU profile and closes its file, and stops writing heap profiles. On a
// nil Profile it does nothing.
func (p *Profile) Stop() error {
	if p == nil {
		return nil
	}
	if p.usr1 != nil {
		signal.Stop(p.usr1)
		close(p.done)
	}
	if p.cpu != nil {
		pprof.StopCPUProfile()
		return p.cpu.Close()
	}
	return nil
}

func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the live heap as of now, not as of the last collection
	return errors.Join(pprof.Lookup("heap").WriteTo(f, 0), f.Close())
}
