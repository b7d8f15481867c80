package stacks

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/google/pprof/profile"

	"github.com/qpslab/qpslab/internal/result"
)

// WriteFolded writes s as folded stacks, "outer;…;inner count" a line,
// thread states merged: what flamegraph.pl and speedscope read.
func WriteFolded(w io.Writer, s result.Stacks) error {
	bw := bufio.NewWriter(w)
	merged := Merge([]result.Stacks{stateless(s)})
	for _, x := range merged.Stacks {
		fmt.Fprintf(bw, "%s %d\n", x.Frames, x.Count)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write folded stacks: %w", err)
	}
	return nil
}

// stateless is s with its thread states dropped.
func stateless(s result.Stacks) result.Stacks {
	out := s
	out.Stacks = make([]result.Stack, len(s.Stacks))
	for i, x := range s.Stacks {
		out.Stacks[i] = result.Stack{Frames: x.Frames, Count: x.Count}
	}
	return out
}

// Profile is s as a pprof profile: one sample per distinct stack and
// state, its value the samples counted, its thread state as the label
// "state"; every function one location. `go tool pprof` reads it.
func Profile(s result.Stacks) *profile.Profile {
	period := int64(s.Interval * float64(time.Second))
	kind := "wall" // pmp: every thread, on CPU or not
	if s.Source == "perf" {
		kind = "cpu"
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: kind, Unit: "nanoseconds"},
		Period:     period,
		Comments:   []string{fmt.Sprintf("qpslab %s stacks (%s), %d capture(s)", s.Source, s.Tool, s.Captures)},
	}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		fn := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name}
		funcs[name] = fn
		p.Function = append(p.Function, fn)
		l := &profile.Location{ID: uint64(len(locs) + 1), Line: []profile.Line{{Function: fn}}}
		locs[name] = l
		p.Location = append(p.Location, l)
		return l
	}
	for _, x := range s.Stacks {
		smp := &profile.Sample{Value: []int64{x.Count}}
		for _, f := range Frames(x.Frames) { // pprof lists the leaf first
			smp.Location = append(smp.Location, loc(f))
		}
		if x.State != "" {
			smp.Label = map[string][]string{"state": {x.State}}
		}
		p.Sample = append(p.Sample, smp)
	}
	return p
}

// WritePprof writes s as a gzipped pprof profile.
func WritePprof(w io.Writer, s result.Stacks) error {
	p := Profile(s)
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("pprof profile: %w", err)
	}
	if err := p.Write(w); err != nil {
		return fmt.Errorf("write pprof profile: %w", err)
	}
	return nil
}
