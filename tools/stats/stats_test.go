package stats

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted
	}
	twenty := make([]int, 20)
	for i := range twenty {
		twenty[i] = i + 1
	}
	for _, tc := range []struct {
		name string
		xs   []int
		p    float64
		want int
	}{
		{"Empty", nil, 50, 0},
		{"OneSampleP0", []int{7}, 0, 7},
		{"OneSampleP50", []int{7}, 50, 7},
		{"OneSampleP100", []int{7}, 100, 7},
		{"P0IsTheSmallest", []int{3, 1, 2}, 0, 1},
		{"P50OfOdd", []int{3, 1, 2}, 50, 2},
		{"P50OfEvenIsTheLowerMiddle", []int{4, 1, 3, 2}, 50, 2},
		{"P100IsTheLargest", []int{3, 1, 2}, 100, 3},
		{"Ties", []int{5, 5, 5, 1}, 50, 5},
		{"TiesAtTheTop", []int{1, 2, 9, 9, 9}, 95, 9},
		{"P95Of100", hundred, 95, 95},
		{"P99Of100", hundred, 99, 99},
		{"P50Of100", hundred, 50, 50},
		{"P95Of20", twenty, 95, 19},
		{"P99Of20", twenty, 99, 20},
		{"BelowZeroIsP0", []int{2, 1}, -5, 1},
		{"AboveHundredIsP100", []int{2, 1}, 150, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.xs)
			if got := Percentile(tc.xs, tc.p); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
			}
			if !slices.Equal(before, tc.xs) {
				t.Errorf("the sample was reordered: %v", tc.xs)
			}
		})
	}
}

// TestRankIsNearestRank checks Rank against the definition, by counting.
func TestRankIsNearestRank(t *testing.T) {
	for n := 1; n <= 50; n++ {
		for _, p := range []float64{0, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 100} {
			t.Run(fmt.Sprintf("n%d_p%v", n, p), func(t *testing.T) {
				// sorted sample 1..n: the answer is the smallest k with k/n ≥ p/100.
				want := 1
				for want < n && float64(want)*100 < p*float64(n) {
					want++
				}
				if got := Rank(n, p) + 1; got != want {
					t.Errorf("Rank(%d, %v) = value %d, want %d", n, p, got, want)
				}
			})
		}
	}
	if Rank(0, 50) != -1 {
		t.Error("Rank of an empty sample: want -1")
	}
}

func TestMedian(t *testing.T) {
	ds := []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}
	if got := Median(ds); got != 2*time.Millisecond {
		t.Errorf("Median = %s, want 2ms", got)
	}
	if got := Median([]float64(nil)); got != 0 {
		t.Errorf("Median(empty) = %v", got)
	}
}

func TestPercentileFunc(t *testing.T) {
	type run struct {
		name string
		d    time.Duration
	}
	runs := []run{{"a", 3}, {"b", 1}, {"c", 2}}
	got := PercentileFunc(runs, 50, func(x, y run) int { return cmp.Compare(x.d, y.d) })
	if got.name != "c" {
		t.Errorf("median run = %v, want c", got)
	}
	if got := PercentileFunc([]run(nil), 50, func(x, y run) int { return 0 }); got != (run{}) {
		t.Errorf("empty: %v", got)
	}
}

func TestSummarize(t *testing.T) {
	xs := make([]int, 200)
	for i := range xs {
		xs[i] = 200 - i
	}
	want := Summary[int]{N: 200, P50: 100, P95: 190, P99: 198, Max: 200}
	if got := Summarize(xs); got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	if got := Summarize([]int(nil)); got != (Summary[int]{}) {
		t.Errorf("Summarize(empty) = %+v", got)
	}
	if xs[0] != 200 {
		t.Error("the sample was reordered")
	}
}
