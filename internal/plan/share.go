package plan

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Share makes the plan one part of a spread run: a fleet agent's share of
// a plan on one target whose load comes from Parts hosts at once. Each
// driven run opens its share of the item's threads (Threads) and starts
// when Ready says, the same instant on every part; the load, the steps'
// hooks (the post-write settle) and the quiet waits are part 0's alone,
// the other parts waiting for it at the next Ready. Its runs carry their
// item (ItemParam) for the merge, and the hosts' count (load_hosts).
type Share struct {
	Part, Parts int
	// Ready is told that this part is ready to run the item keyed key,
	// and returns when to start it (every part's run starts then).
	Ready func(ctx context.Context, key string) (time.Time, error)
}

// seed is the seed of this part of a spread run: the spec's, moved by
// the part (the same seed on every host would send each the same rows in
// the same order); the spec's own for the first part, or no spread.
func (s *Share) seed(spec uint64) uint64 {
	if s == nil || s.Part == 0 {
		return spec
	}
	return (spec + uint64(s.Part)*0x9E3779B97F4A7C15) >> 1
}

// ItemParam is the run parameter that keys a part's run of an item: its
// test, the plan's thread count and the repeat (ShareKey).
const ItemParam = "spread_item"

// ShareKey keys an item of a spread run, the same on every part.
func ShareKey(test string, threads int, repeat string) string {
	return test + "@" + strconv.Itoa(threads) + "#" + repeat
}

// Threads is this part's share of n threads: n/Parts, the first n%Parts
// parts one more.
func (s *Share) Threads(n int) int {
	q := n / s.Parts
	if s.Part < n%s.Parts {
		q++
	}
	return q
}

// follower says the plan is a part of a spread run other than part 0,
// which leaves the load, the hooks and the quiet waits to part 0.
func (p *Runner) follower() bool { return p.Share != nil && p.Share.Part != 0 }

// CheckShare refuses a spread plan that cannot be shared: more than one
// label (a spread runs on one target), a thread count below the parts.
func (p *Runner) CheckShare() error {
	if p.Share == nil {
		return nil
	}
	if len(p.Targets) != 1 || len(p.Labels()) != 1 {
		return fmt.Errorf("a spread run's load goes to one server: name one --target")
	}
	for _, it := range p.Items() {
		st := p.Steps.Steps[it.Step]
		if st.Task == nil && it.Threads < p.Share.Parts {
			return fmt.Errorf("%s at %d thread(s) cannot be spread over %d hosts: give each host one connection or more (--threads %d or more)", st.Test, it.Threads, p.Share.Parts, p.Share.Parts)
		}
	}
	return nil
}

// ShareKeys are the keys of the plan's driven items, in the order they
// run: those whose parts a spread run merges.
func (p *Runner) ShareKeys() []string {
	var out []string
	for _, it := range p.Items() {
		if st := p.Steps.Steps[it.Step]; st.Task == nil {
			out = append(out, ShareKey(st.Test, it.Threads, strconv.Itoa(it.Repeat)))
		}
	}
	return out
}

// startShared waits for every part to be ready for item key, then until
// the start they agreed on.
func (p *Runner) startShared(ctx context.Context, key string) error {
	at, err := p.Share.Ready(ctx, key)
	if err != nil {
		return err
	}
	if d := time.Until(at); d > 0 {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(d):
		}
	}
	return nil
}
