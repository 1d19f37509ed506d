//go:build race

package segment

// raceEnabled: the race detector slows the differential tests about tenfold; they
// compare with one zap version then (norace_test.go).
const raceEnabled = true
