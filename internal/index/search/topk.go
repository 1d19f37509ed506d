package search

// scoredDoc is a document of the index, by its number, and its score.
type scoredDoc struct {
	doc   uint64
	score float64
}

// scoredHeap keeps the worst of the best documents on top: the lowest score, and of
// equal scores the latest in index order.
type scoredHeap []scoredDoc

// offer keeps d if it is among the best n offered so far. Documents are offered in index
// order: one that ties the worst kept comes after it, and does not enter.
func (h *scoredHeap) offer(d scoredDoc, n int) {
	switch {
	case len(*h) < n:
		h.push(d)
	case d.score > (*h)[0].score:
		(*h)[0] = d
		h.down(0)
	}
}

// best empties the heap, best first.
func (h *scoredHeap) best() []scoredDoc {
	out := make([]scoredDoc, len(*h))
	for i := len(*h) - 1; i >= 0; i-- {
		out[i] = h.pop()
	}
	return out
}

func (h scoredHeap) worse(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].doc > h[j].doc
}

func (h *scoredHeap) push(d scoredDoc) {
	*h = append(*h, d)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.worse(i, p) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h *scoredHeap) pop() scoredDoc {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h scoredHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.worse(r, l) {
			m = r
		}
		if !h.worse(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
