//go:build race

package indexer_test

const raceEnabled = true
