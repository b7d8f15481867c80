package report

import (
	"fmt"
	"strconv"
	"strings"
)

// The config diff is a small Myers diff (An O(ND) Difference Algorithm,
// 1986) of lines rather than a dependency: configs are short, and it keeps
// go.mod as it is.

type diffKind byte

const (
	diffEq diffKind = iota
	diffDel
	diffIns
)

type diffEdit struct {
	kind diffKind
	a, b int // line indexes in a and b (the one that applies)
}

// diffLines is a shortest edit script turning a into b.
func diffLines(a, b []string) []diffEdit {
	n, m := len(a), len(b)
	mx := n + m
	v := make([]int, 2*mx+3)
	at := func(k int) int { return k + mx + 1 }
	// trace[d] holds v[-d-1 .. d+1] as it was before step d.
	var trace [][]int
	var d int
search:
	for d = 0; d <= mx; d++ {
		trace = append(trace, append([]int(nil), v[at(-d-1):at(d+1)+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[at(k-1)] < v[at(k+1)]) {
				x = v[at(k+1)]
			} else {
				x = v[at(k-1)] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[at(k)] = x
			if x >= n && y >= m {
				break search
			}
		}
	}
	var out []diffEdit
	x, y := n, m
	for ; d >= 0; d-- {
		tv := trace[d]
		get := func(k int) int { return tv[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := 0
		if d > 0 {
			px = get(pk)
		}
		py := px - pk
		if d == 0 {
			px, py = 0, 0
		}
		for x > px && y > py {
			x, y = x-1, y-1
			out = append(out, diffEdit{diffEq, x, y})
		}
		if d > 0 {
			if x == px {
				y--
				out = append(out, diffEdit{diffIns, x, y})
			} else {
				x--
				out = append(out, diffEdit{diffDel, x, y})
			}
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func diffSplit(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffUnified is `diff -u` of two texts with ctx lines of context, nil when
// they are equal.
func diffUnified(nameA, nameB, textA, textB string, ctx int) []string {
	a, b := diffSplit(textA), diffSplit(textB)
	es := diffLines(a, b)
	var changes []int
	for i, e := range es {
		if e.kind != diffEq {
			changes = append(changes, i)
		}
	}
	if len(changes) == 0 {
		return nil
	}
	out := []string{"--- " + nameA, "+++ " + nameB}
	for i := 0; i < len(changes); {
		lo := max(changes[i]-ctx, 0)
		j := i
		for j+1 < len(changes) && changes[j+1]-changes[j]-1 <= 2*ctx { // merge hunks whose context would touch
			j++
		}
		hi := min(changes[j]+ctx, len(es)-1)
		var body []string
		na, nb := 0, 0
		for _, e := range es[lo : hi+1] {
			switch e.kind {
			case diffEq:
				body = append(body, " "+a[e.a])
				na, nb = na+1, nb+1
			case diffDel:
				body = append(body, "-"+a[e.a])
				na++
			case diffIns:
				body = append(body, "+"+b[e.b])
				nb++
			}
		}
		out = append(out, fmt.Sprintf("@@ -%s +%s @@", diffHunkRange(es[lo].a, na), diffHunkRange(es[lo].b, nb)))
		out = append(out, body...)
		i = j + 1
	}
	return out
}

// diffHunkRange is GNU diff's "start,count" (1-based; "start" alone for one
// line; the line before for none).
func diffHunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return strconv.Itoa(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}
