// Package cpuprofile writes the CPU profile a command's --cpuprofile asks for.
package cpuprofile

import (
	"errors"
	"os"
	"runtime/pprof"
)

// Profile is a CPU profile being written.
type Profile struct{ f *os.File }

// Start begins writing a CPU profile of the process to path; "" writes none (a nil
// Profile, which Stop accepts).
func Start(path string) (*Profile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return &Profile{f}, nil
}

// Stop ends the profile and closes its file; on a nil Profile it does nothing.
func (p *Profile) Stop() error {
	if p == nil {
		return nil
	}
	pprof.StopCPUProfile()
	return p.f.Close()
}
