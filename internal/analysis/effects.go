package analysis

import (
	"math"
	"sort"
	"strings"

	"github.com/qpslab/qpslab/internal/history"
)

// Effect is what changing one setting of a config grid did: over every
// pair of labels that differ only in that setting (same build, the other
// settings equal), the geomean of the relative values of the second
// against the first.
type Effect struct {
	Setting string    `json:"setting"`
	From    string    `json:"from"`
	To      string    `json:"to"`
	Pairs   int       `json:"pairs"`
	Geomean []float64 `json:"geomean"` // per pair
	Median  float64   `json:"median"`  // of the pairs' geomeans
}

// pointOf reads a set's grid point (the runs' "set" param, "a=1,b=2"): the
// build and each setting's value. ok is false for a set outside a grid.
func pointOf(s Set) (build string, vals map[string]string, order []string, ok bool) {
	for _, r := range s.Runs {
		pt := r.Params["set"]
		if pt == "" {
			continue
		}
		vals = map[string]string{}
		for _, kv := range strings.Split(pt, ",") {
			k, v, _ := strings.Cut(kv, "=")
			vals[k] = v
			order = append(order, k)
		}
		return r.Build, vals, order, true
	}
	return "", nil, nil, false
}

// Effects compares the labels of a config grid setting by setting: for each
// setting and each of its values after the first seen, the pairs of labels
// that differ only in it. Labels outside a grid are left out; none in a
// grid gives none.
func Effects(sets []Set) []Effect {
	type pt struct {
		set   Set
		build string
		vals  map[string]string
	}
	var pts []pt
	var settings []string
	values := map[string][]string{}
	for _, s := range sets {
		b, vals, order, ok := pointOf(s)
		if !ok {
			continue
		}
		pts = append(pts, pt{s, b, vals})
		for _, k := range order {
			if _, seen := values[k]; !seen {
				settings = append(settings, k)
			}
			if !contains(values[k], vals[k]) {
				values[k] = append(values[k], vals[k])
			}
		}
	}
	var out []Effect
	for _, k := range settings {
		from := values[k][0]
		for _, to := range values[k][1:] {
			e := Effect{Setting: k, From: from, To: to}
			for _, a := range pts {
				if a.vals[k] != from {
					continue
				}
				for _, b := range pts {
					if b.vals[k] != to || b.build != a.build || !sameOthers(a.vals, b.vals, k) {
						continue
					}
					c, err := Compare(a.set, []Set{b.set}, Options{})
					if err != nil || len(c.Geomean) == 0 || math.IsNaN(c.Geomean[0]) {
						continue
					}
					e.Geomean = append(e.Geomean, c.Geomean[0])
				}
			}
			e.Pairs = len(e.Geomean)
			if e.Pairs == 0 {
				continue
			}
			v := append([]float64{}, e.Geomean...)
			sort.Float64s(v)
			e.Median = history.Median(v)
			out = append(out, e)
		}
	}
	return out
}

func sameOthers(a, b map[string]string, except string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if k != except && b[k] != v {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
