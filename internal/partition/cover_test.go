package partition

import (
	"fmt"
	"testing"
)

// TestCoverChoosesSetsThatDoNotOverlap: of the live replicas' sets, cover chooses some
// that hold every partition exactly once, the largest first, or none when no choice does.
func TestCoverChoosesSetsThatDoNotOverlap(t *testing.T) {
	for _, c := range []struct {
		p    int
		sets [][]int
		want string
	}{
		{4, [][]int{{0, 1}, {1, 2}, {0}, {3}}, "[[0] [1 2] [3]]"},
		{4, [][]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}}, "[[0 1] [2 3]]"},
		{4, [][]int{{0}, {1}, {2}, {3}, {0, 1}, {0, 1}}, "[[0 1] [2] [3]]"},
		{3, [][]int{{0, 1}, {1, 2}}, "[]"}, // no cover: every choice holds 1 twice
		{4, [][]int{{0, 1}, {2}}, "[]"},    // partition 3 has no replica
		{2, [][]int{{0, 5}, {0}, {1}}, "[[0] [1]]"},
	} {
		if got := fmt.Sprint(cover(c.p, c.sets)); got != c.want {
			t.Errorf("cover(%d, %v) = %s, want %s", c.p, c.sets, got, c.want)
		}
	}
}
