package changepoint

import "math"

// merger is the state of the merge step, reused between runs. Change points
// are addressed by their position i in engine.weak (index order). Segments
// are addressed by an id: 0 for the segment before the first change point,
// i+1 for the segment that starts at change point i; when a change point is
// removed its right segment joins its left one.
type merger struct {
	prev, next []int
	alive      []bool
	st         []segStats // as last computed (stale for Otava's left neighbours); p −1: below c.p
	ver        []uint32
	seg        []agg // sums over the points of each segment, excluded points left out
	hp, hm, hs heapQ
	out        []int
}

// entry is a heap element: a change point (in hs, a segment id) and its key.
type entry struct {
	key float64
	pos int
	ver uint32
}

// heapQ is a binary heap; ties go to the lower position, as Python's max()
// and min() return the first of equal elements.
type heapQ struct {
	a    []entry
	desc bool // largest key first
}

func (h *heapQ) before(x, y entry) bool {
	if x.key != y.key {
		if h.desc {
			return x.key > y.key
		}
		return x.key < y.key
	}
	return x.pos < y.pos
}

func (h *heapQ) push(x entry) {
	h.a = append(h.a, x)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.before(h.a[i], h.a[p]) {
			break
		}
		h.a[i], h.a[p] = h.a[p], h.a[i]
		i = p
	}
}

func (h *heapQ) pop() {
	n := len(h.a) - 1
	h.a[0] = h.a[n]
	h.a = h.a[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.before(h.a[l], h.a[m]) {
			m = l
		}
		if r < n && h.before(h.a[r], h.a[m]) {
			m = r
		}
		if m == i {
			return
		}
		h.a[i], h.a[m] = h.a[m], h.a[i]
		i = m
	}
}

// merge is Otava's merge step over the weak change points, extended with
// the minimum segment rule. Until nothing is left to remove, it removes one
// change point and re-tests its neighbours:
//  1. if a segment spans fewer than c.minSeg points, the shortest (the first
//     of equally short ones) is resolved by collapse; this comes first so
//     that a spike's points are set aside before the p-value rule can merge
//     them into a neighbouring segment;
//  2. else the one with the largest p-value if that p-value is ≥ c.p (a NaN
//     p-value, from two equal constant segments, is passed over unless it is
//     the first change point's, as Python's max() does);
//  3. else the one with the smallest magnitude if it is ≤ c.minMag.
//
// Steps 2 and 3 are Otava's; with c.minSeg = 1 step 1 never applies.
// Otava re-tests the right neighbour and the one after it, not the left
// neighbour (c.otavaMerge); this package re-tests both neighbours.
// merge returns the positions (in e.weak) of the change points that remain.
func (e *engine) merge() []int {
	m := &e.m
	k := len(e.weak)
	n := len(e.x)
	m.prev = resize(m.prev, k)
	m.next = resize(m.next, k)
	m.alive = resize(m.alive, k)
	m.st = resize(m.st, k)
	m.ver = resize(m.ver, k)
	m.seg = resize(m.seg, k+1)
	m.hp = heapQ{a: m.hp.a[:0], desc: true}
	m.hm = heapQ{a: m.hm.a[:0]}
	m.hs = heapQ{a: m.hs.a[:0]}
	head := -1
	if k > 0 {
		head = 0
	}
	bound := func(i int) int { // index of change point i; n past the last
		if i < 0 {
			return n
		}
		return e.weak[i]
	}
	for i := 0; i < k; i++ {
		m.prev[i], m.next[i], m.alive[i], m.ver[i] = i-1, i+1, true, 0
	}
	if k > 0 {
		m.next[k-1] = -1
	}
	if n == 0 {
		m.out = m.out[:0]
		return m.out
	}
	e.sp = &e.pre
	if e.c.calibrated {
		e.rb.autocorrelation()
		e.sp = &e.rb.pre
	}
	m.seg[0] = e.sp.seg(0, bound(head))
	for i := 0; i < k; i++ {
		m.seg[i+1] = e.sp.seg(e.weak[i], bound(m.next[i]))
	}
	// span is the number of points of segment id, excluded ones included.
	span := func(id int) int {
		if id == 0 {
			return bound(head)
		}
		return bound(m.next[id-1]) - e.weak[id-1]
	}
	refresh := func(i int) {
		if i < 0 {
			return
		}
		// Otava's merge keeps p-values that are no longer true; they are
		// computed exactly so that tests can compare them with Otava's.
		m.st[i] = e.stats(m.seg[m.prev[i]+1], m.seg[i+1], span(m.prev[i]+1)+span(i+1), e.c.otavaMerge)
		m.ver[i]++
		if !math.IsNaN(m.st[i].p) {
			m.hp.push(entry{m.st[i].p, i, m.ver[i]})
		}
		m.hm.push(entry{m.st[i].mag, i, m.ver[i]})
	}
	pushSeg := func(id int) {
		if e.c.minSeg > 1 {
			m.hs.push(entry{float64(span(id)), id, 0})
		}
	}
	for i := 0; i < k; i++ {
		refresh(i)
	}
	for id := 0; id <= k; id++ {
		pushSeg(id)
	}
	valid := func(h *heapQ) (entry, bool) {
		for len(h.a) > 0 {
			t := h.a[0]
			if m.alive[t.pos] && m.ver[t.pos] == t.ver {
				return t, true
			}
			h.pop()
		}
		return entry{}, false
	}
	validSeg := func() (entry, bool) {
		for len(m.hs.a) > 0 {
			t := m.hs.a[0]
			if (t.pos == 0 || m.alive[t.pos-1]) && float64(span(t.pos)) == t.key {
				return t, true
			}
			m.hs.pop()
		}
		return entry{}, false
	}
	for left := k; left > 0; left-- {
		sel := -1
		if e.c.minSeg > 1 {
			if t, ok := validSeg(); ok && t.key < float64(e.c.minSeg) {
				var exclude bool
				sel, exclude = e.collapse(t.pos, head)
				if exclude {
					m.seg[t.pos] = agg{}
				}
			}
		}
		if sel >= 0 {
			// resolved a short segment
		} else if math.IsNaN(m.st[head].p) {
			sel = head
		} else if t, ok := valid(&m.hp); ok && t.key >= e.c.p {
			sel = t.pos
		}
		if sel < 0 {
			if t, ok := valid(&m.hm); ok && t.key <= e.c.minMag {
				sel = t.pos
			}
		}
		if sel < 0 {
			break
		}
		pv, nx := m.prev[sel], m.next[sel]
		m.seg[pv+1] = m.seg[pv+1].add(m.seg[sel+1])
		m.alive[sel] = false
		if pv >= 0 {
			m.next[pv] = nx
		}
		if nx >= 0 {
			m.prev[nx] = pv
		}
		if head == sel {
			head = nx
		}
		if e.c.otavaMerge {
			refresh(nx)
			if nx >= 0 {
				refresh(m.next[nx])
			}
		} else {
			refresh(pv)
			refresh(nx)
		}
		pushSeg(pv + 1)
	}
	m.out = m.out[:0]
	for i := head; i >= 0; i = m.next[i] {
		m.out = append(m.out, i)
	}
	return m.out
}

// collapse resolves segment id, which spans fewer than c.minSeg points: it
// returns the change point to remove and whether the segment's points are
// to be left out of the statistics from now on.
//
// At either end of the series the segment loses its only change point and
// its points are left out (too few to establish a level; a spike at the
// newest point must not bias the segment before it). Between two change
// points, the one next to the neighbouring segment whose mean is closer to
// the segment's goes (the segment joins that neighbour, so a one-point
// transition between two levels puts the change point on the larger jump);
// if the segment's mean is outside the range of both neighbours' means (a
// spike), its points are left out, so that a spike does not inflate the
// variance of the segment it joins and hide a real change next to it. The
// remaining change point is then re-tested like any other.
func (e *engine) collapse(id, head int) (sel int, exclude bool) {
	m := &e.m
	l := id - 1 // change point at the segment's start
	r := head   // change point at its end
	if l >= 0 {
		r = m.next[l]
	}
	if l < 0 {
		return r, true
	}
	if r < 0 {
		return l, true
	}
	ref := e.sp.ref
	ms, _ := m.seg[id].meanVar(ref)
	ml, _ := m.seg[m.prev[l]+1].meanVar(ref)
	mr, _ := m.seg[r+1].meanVar(ref)
	exclude = ms < min(ml, mr) || ms > max(ml, mr)
	jl, jr := math.Abs(ms-ml), math.Abs(mr-ms)
	switch {
	case jl < jr:
		return l, exclude
	case jr < jl:
		return r, exclude
	case m.st[l].p > m.st[r].p:
		return l, exclude
	}
	return r, exclude
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
