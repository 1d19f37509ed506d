package main

import (
	"testing"
	"time"
)

// A large catch-up is handed back as soon as every projection is idle, even right after an
// earlier release, and once more when the stream's block caches have expired; a small one
// waits for releaseGap; nothing is released while a projection is still applying.
func TestReleasePolicy(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var p releasePolicy
	if p.due(t0, 500, true) {
		t.Fatal("released after fewer than releaseEvery events")
	}
	if !p.due(t0, 2000, true) {
		t.Fatal("first catch-up of releaseEvery events not released")
	}
	// A cold index goes on: the projections were idle for a moment, then apply 100k more.
	now := t0.Add(5 * time.Second)
	if p.due(now, 50000, false) {
		t.Fatal("released while a projection was applying")
	}
	if p.due(now, 2500, true) {
		t.Fatal("a small catch-up released within releaseGap of the last")
	}
	now = t0.Add(20 * time.Second)
	if !p.due(now, 102000, true) {
		t.Fatal("a large catch-up not released at once because of the release before it")
	}
	if p.due(now.Add(releaseAgain-time.Second), 102000, true) {
		t.Fatal("released again before the stream's caches expired")
	}
	if !p.due(now.Add(releaseAgain), 102000, true) {
		t.Fatal("not released again once the stream's caches expired")
	}
	if p.due(now.Add(2*releaseAgain), 102000, true) {
		t.Fatal("released a third time with nothing applied")
	}
	// A small catch-up after releaseGap is released.
	if !p.due(now.Add(releaseGap+time.Second), 103500, true) {
		t.Fatal("a catch-up of releaseEvery events not released after releaseGap")
	}
}
