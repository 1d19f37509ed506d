//go:build !race

package reconcile_test

const raceEnabled = false
