package stacks

import (
	"sort"
	"strings"

	"github.com/qpslab/qpslab/internal/result"
)

// Counter counts identical stacks (the same frames in the same thread
// state), as pt-pmp's `sort | uniq -c` does.
type Counter struct {
	n map[stackKey]int64
}

type stackKey struct{ frames, state string }

// Add counts one thread's stack (frames innermost first) in state.
func (c *Counter) Add(frames []string, state string) {
	if len(frames) == 0 {
		return
	}
	if c.n == nil {
		c.n = map[stackKey]int64{}
	}
	c.n[stackKey{Fold(frames), state}]++
}

// Stacks are the counted stacks, most samples first (then by frames and
// state, so that equal counts keep one order).
func (c *Counter) Stacks() []result.Stack {
	out := make([]result.Stack, 0, len(c.n))
	for k, n := range c.n {
		out = append(out, result.Stack{Frames: k.frames, State: k.state, Count: n})
	}
	sortStacks(out)
	return out
}

func sortStacks(s []result.Stack) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].Count != s[j].Count {
			return s[i].Count > s[j].Count
		}
		if s[i].Frames != s[j].Frames {
			return s[i].Frames < s[j].Frames
		}
		return s[i].State < s[j].State
	})
}

// Fold joins frames (innermost first, as captured) into the folded form,
// outermost first and ";"-separated.
func Fold(frames []string) string {
	r := make([]string, len(frames))
	for i, f := range frames {
		r[len(frames)-1-i] = f
	}
	return strings.Join(r, ";")
}

// Frames splits a folded stack into its frames, innermost first (as
// pt-pmp prints them).
func Frames(folded string) []string {
	f := strings.Split(folded, ";")
	for i, j := 0, len(f)-1; i < j; i, j = i+1, j-1 {
		f[i], f[j] = f[j], f[i]
	}
	return f
}

// Merge sums stack sets of one source (the repeats of a test): their
// stacks, captures and pauses (the largest pause, the mean weighted by
// captures); notes are kept once each.
func Merge(sets []result.Stacks) result.Stacks {
	if len(sets) == 0 {
		return result.Stacks{}
	}
	out := result.Stacks{Source: sets[0].Source, Interval: sets[0].Interval}
	n := map[stackKey]int64{}
	seenNote := map[string]bool{}
	var pauseSum float64
	tools := map[string]bool{}
	for _, s := range sets {
		for _, x := range s.Stacks {
			n[stackKey{x.Frames, x.State}] += x.Count
		}
		out.Captures += s.Captures
		pauseSum += s.PauseMeanMs * float64(s.Captures)
		out.PauseMaxMs = max(out.PauseMaxMs, s.PauseMaxMs)
		if s.Tool != "" && !tools[s.Tool] {
			if out.Tool != "" {
				out.Tool += "+"
			}
			out.Tool += s.Tool
			tools[s.Tool] = true
		}
		for _, note := range s.Notes {
			if !seenNote[note] {
				seenNote[note] = true
				out.Notes = append(out.Notes, note)
			}
		}
	}
	if out.Captures > 0 {
		out.PauseMeanMs = pauseSum / float64(out.Captures)
	}
	for k, c := range n {
		out.Stacks = append(out.Stacks, result.Stack{Frames: k.frames, State: k.state, Count: c})
	}
	sortStacks(out.Stacks)
	return out
}
