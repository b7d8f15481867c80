package stacks

import (
	"math"
	"sort"

	"github.com/qpslab/qpslab/internal/result"
)

// Entry is one stack with its samples and share of all samples, in one set
// (Count, Share) or two (and CountB, ShareB).
type Entry struct {
	Frames string  `json:"frames"` // folded, outermost first
	State  string  `json:"state,omitempty"`
	Count  int64   `json:"count"`
	Share  float64 `json:"share"` // of all samples, 0..1
	CountB int64   `json:"count_b,omitempty"`
	ShareB float64 `json:"share_b,omitempty"`
}

// Delta is ShareB - Share: how much of the samples the stack gained.
func (e Entry) Delta() float64 { return e.ShareB - e.Share }

// Top returns the n stacks with the most samples (all for n ≤ 0), each
// with its thread state, and its share of all samples.
func Top(s result.Stacks, n int) []Entry {
	total := float64(s.Samples())
	sorted := append([]result.Stack(nil), s.Stacks...)
	sortStacks(sorted)
	var out []Entry
	for _, x := range sorted {
		if n > 0 && len(out) == n {
			break
		}
		out = append(out, Entry{Frames: x.Frames, State: x.State, Count: x.Count, Share: float64(x.Count) / total})
	}
	return out
}

// States is the share of samples in each thread state ("" where unknown).
func States(s result.Stacks) map[string]float64 {
	total := float64(s.Samples())
	out := map[string]float64{}
	for _, x := range s.Stacks {
		out[x.State] += float64(x.Count) / total
	}
	return out
}

// Diff is how two stack sets differ: the stacks whose share of samples
// grew or shrank most from A to B, and the ones present in one and absent
// in the other (the seed's "one stack I see in 8.0.30 that doesn't occur
// in 8.0.28"). Thread states are merged: a stack is its frames. Stacks
// whose share stays below Threshold in both are noise and left out.
type Diff struct {
	SamplesA, SamplesB int64
	Threshold          float64 // share, 0..1
	Grew, Shrank       []Entry // in both, by how much their share moved
	OnlyA, OnlyB       []Entry // in one only, by share
}

// Compare diffs a against b: at most n stacks in each list (all for n ≤ 0);
// threshold is the share (0..1) below which a stack is noise.
func Compare(a, b result.Stacks, threshold float64, n int) Diff {
	d := Diff{SamplesA: a.Samples(), SamplesB: b.Samples(), Threshold: threshold}
	ca, cb := byFrames(a), byFrames(b)
	all := map[string]bool{}
	for f := range ca {
		all[f] = true
	}
	for f := range cb {
		all[f] = true
	}
	share := func(c, total int64) float64 {
		if total == 0 {
			return 0
		}
		return float64(c) / float64(total)
	}
	for f := range all {
		e := Entry{Frames: f, Count: ca[f], CountB: cb[f], Share: share(ca[f], d.SamplesA), ShareB: share(cb[f], d.SamplesB)}
		if math.Max(e.Share, e.ShareB) < threshold {
			continue
		}
		switch {
		case e.Count == 0:
			d.OnlyB = append(d.OnlyB, e)
		case e.CountB == 0:
			d.OnlyA = append(d.OnlyA, e)
		case e.Delta() > 0:
			d.Grew = append(d.Grew, e)
		case e.Delta() < 0:
			d.Shrank = append(d.Shrank, e)
		}
	}
	order := func(l []Entry, key func(Entry) float64) []Entry {
		sort.Slice(l, func(i, j int) bool {
			if ki, kj := key(l[i]), key(l[j]); ki != kj {
				return ki > kj
			}
			return l[i].Frames < l[j].Frames
		})
		if n > 0 && len(l) > n {
			l = l[:n]
		}
		return l
	}
	d.Grew = order(d.Grew, func(e Entry) float64 { return e.Delta() })
	d.Shrank = order(d.Shrank, func(e Entry) float64 { return -e.Delta() })
	d.OnlyA = order(d.OnlyA, func(e Entry) float64 { return e.Share })
	d.OnlyB = order(d.OnlyB, func(e Entry) float64 { return e.ShareB })
	return d
}

func byFrames(s result.Stacks) map[string]int64 {
	out := map[string]int64{}
	for _, x := range s.Stacks {
		out[x.Frames] += x.Count
	}
	return out
}
