package reconcile

import "os"

// StateFileContent is the state file's content, for tests that doctor a file.
type StateFileContent = knownState

// ReadStateFile reads a state file without checking it against any stream.
func ReadStateFile(file string) (StateFileContent, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return knownState{}, err
	}
	return decodeState(b)
}

// WriteStateFile writes st as a state file.
func WriteStateFile(file string, st StateFileContent) error { return writeState(file, st) }

// KnownCount is how many documents the indexer knows the stream holds; only the goroutine
// publishing may ask while a scan runs (from Progress).
func (x *Indexer) KnownCount() int { return len(x.known) }
