package analysis

import "math"

// Floor is one test's noise floor as an A/A comparison (one build and
// config as two labels, paired) measured it.
type Floor struct {
	Test       string
	Threads    int
	Conditions string
	// Floor is the larger of how far the A/A relative value lies from 1
	// and half the width of its interval (both on the log scale, as a
	// fraction): the change this host cannot tell from a server against
	// itself at that budget. A change a comparison calls significant must
	// be larger to be called better or worse.
	Floor       float64
	Rel, Lo, Hi float64
	Rounds      int
	Pairing     string
	Significant bool // the A/A run itself found a difference (an instance effect, or noise)
}

// AAFloors are the noise floors of an A/A comparison's paired rows (its
// first other label against the base); rows that were not paired, or
// whose verdict has no interval, give none.
func AAFloors(c *Comparison) []Floor {
	var out []Floor
	for _, r := range c.Rows {
		if len(r.Others) == 0 || r.Group == "load" {
			continue
		}
		v := r.Others[0].Verdict
		if v.Method != MethodPaired || !(v.Lo > 0) || !(v.Hi > 0) || math.IsInf(v.Hi, 0) || !(v.Rel > 0) {
			continue
		}
		half := math.Log(v.Hi/v.Lo) / 2
		off := math.Abs(math.Log(v.Rel))
		out = append(out, Floor{Test: r.Test, Threads: r.Threads, Conditions: r.Conditions, Floor: math.Expm1(math.Max(half, off)),
			Rel: v.Rel, Lo: v.Lo, Hi: v.Hi, Rounds: v.N, Pairing: v.Pairing, Significant: v.Significant})
	}
	return out
}
