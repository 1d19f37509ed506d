package main

import (
	"testing"
	"time"
)

// A large catch-up is handed back as soon as every projection has been idle for
// releaseSettle, even right after an earlier release, and once more when the stream's
// block caches have expired; a small one waits for releaseGap; nothing is released while a
// projection is still applying, nor the moment they are all idle.
func TestReleasePolicy(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var p releasePolicy
	// settled reports whether a release is due once the projections, busy until now, have
	// been idle for releaseSettle, with applied events applied.
	settled := func(applied uint64) bool {
		if p.due(now, applied, false) {
			t.Fatal("released while a projection was applying")
		}
		if p.due(now, applied, true) {
			t.Fatal("released the moment the projections were idle, before releaseSettle")
		}
		now = now.Add(releaseSettle)
		return p.due(now, applied, true)
	}
	if settled(500) {
		t.Fatal("released after fewer than releaseEvery events")
	}
	if !settled(2000) {
		t.Fatal("first catch-up of releaseEvery events not released")
	}
	// A cold index goes on: the projections were idle for a moment, then apply many more.
	now = now.Add(5 * time.Second)
	if settled(3500) {
		t.Fatal("a small catch-up released within releaseGap of the last")
	}
	now = now.Add(10 * time.Second)
	if !settled(102000) {
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
	now = now.Add(releaseGap)
	if !settled(103500) {
		t.Fatal("a catch-up of releaseEvery events not released after releaseGap")
	}
}
