// Package stats holds the measuring tools' one definition of a percentile, so that every
// p50, p95 and p99 they report means the same thing.
package stats

import (
	"cmp"
	"math"
	"slices"
)

// Rank is the index, in a sorted sample of n values, of its p-th percentile by nearest
// rank: the smallest value such that at least p% of the sample is ≤ it. p is clamped to
// [0, 100]; p = 0 is the smallest value. It is -1 for an empty sample.
func Rank(n int, p float64) int {
	if n == 0 {
		return -1
	}
	p = min(max(p, 0), 100)
	// The small epsilon keeps p*n/100 that is whole in decimal (95 × 20 / 100) from
	// rounding up past it in binary.
	k := int(math.Ceil(p*float64(n)/100 - 1e-9))
	return min(max(k-1, 0), n-1)
}

// Percentile is the p-th percentile of xs by nearest rank (see Rank), or the zero value
// for an empty sample. xs is left as it was.
func Percentile[T cmp.Ordered](xs []T, p float64) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[Rank(len(s), p)]
}

// PercentileFunc is Percentile for values ordered by compare, such as runs ordered by
// their duration: it returns the whole value at that rank.
func PercentileFunc[T any](xs []T, p float64, compare func(a, b T) int) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	s := slices.Clone(xs)
	slices.SortStableFunc(s, compare)
	return s[Rank(len(s), p)]
}

// Median is the 50th percentile by nearest rank: of an even number of values, the lower
// of the two middle ones.
func Median[T cmp.Ordered](xs []T) T { return Percentile(xs, 50) }

// Summary is the percentiles the tools' tables show.
type Summary[T cmp.Ordered] struct {
	N                  int
	P50, P95, P99, Max T
}

// Summarize sorts a copy of xs once and reads every percentile of the Summary from it.
func Summarize[T cmp.Ordered](xs []T) Summary[T] {
	s := Summary[T]{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	at := func(p float64) T { return sorted[Rank(len(sorted), p)] }
	s.P50, s.P95, s.P99, s.Max = at(50), at(95), at(99), at(100)
	return s
}
