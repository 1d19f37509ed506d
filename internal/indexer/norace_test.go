//go:build !race

package indexer_test

const raceEnabled = false
