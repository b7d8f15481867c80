package selector

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// Runs from unlike hosts are never pooled, nor compared, without a word.
// Two hosts are unlike where their fingerprints' ids differ (host.ID: the
// CPU's speed state, boost, governors, EPP, SMT, and the machine, its CPU
// model, kernel, memory): the key history splits its series by, so that
// detect and compare answer of the same runs. A label whose runs came
// from unlike hosts is refused, naming the facts that differ and the fix
// (--by-host puts each host's runs apart; LABEL@HOST takes one host's);
// so are two labels measured on unlike hosts, unless the question names
// the hosts (LABEL@HOST, --by-host: a comparison across hosts asked for)
// or the plan put the host in a state of its own for each label (qpslab
// run --boost, recorded in each run's host.StateParam), and the hosts
// differ only in that. Runs that record no host (imports) say nothing of
// it and are not held against the others.

// hostOf is the host of each distinct fingerprint of some runs.
type hostOf struct {
	ids map[string]string // fingerprint → id
	fps map[string][]byte // id → one fingerprint of it
}

func (h *hostOf) id(r result.Run) string {
	if len(r.Host) == 0 {
		return ""
	}
	if h.ids == nil {
		h.ids, h.fps = map[string]string{}, map[string][]byte{}
	}
	id, ok := h.ids[string(r.Host)]
	if !ok {
		id, _ = store.HostID(r.Host)
		h.ids[string(r.Host)] = id
		if id != "" && h.fps[id] == nil {
			h.fps[id] = r.Host
		}
	}
	return id
}

// hostsOf are the ids of the hosts runs came from, in the order of their
// first runs ("" left out).
func (h *hostOf) hostsOf(runs []result.Run) []string {
	var ids []string
	for _, r := range runs {
		if id := h.id(r); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// declared are the facts of the host the plan set for every one of the
// runs (host.StateParam's names; nil when some run has none).
func declared(runs []result.Run) []string {
	var out []string
	for i, r := range runs {
		var names []string
		for _, kv := range strings.Split(r.Params[host.StateParam], ",") {
			if k, _, ok := strings.Cut(kv, "="); ok {
				names = append(names, k)
			}
		}
		if i == 0 {
			out = names
		} else {
			out = slices.DeleteFunc(out, func(n string) bool { return !slices.Contains(names, n) })
		}
		if len(out) == 0 {
			return nil
		}
	}
	return out
}

// unlikeHosts refuses sets that pool runs of unlike hosts, and unnamed
// labels measured on unlike hosts (see above). named says which sets name
// their host (LABEL@HOST, --by-host).
func unlikeHosts(ctx context.Context, st *store.Store, sets []analysis.Set, named []bool) error {
	var h hostOf
	one := make([]string, len(sets)) // each set's one host ("": none recorded)
	for i, set := range sets {
		ids := h.hostsOf(set.Runs)
		if len(ids) > 1 {
			what, err := h.differ(ctx, st, ids, nil)
			if err != nil {
				return err
			}
			newest := ids[len(ids)-1]
			fix := "put each host's runs apart with --by-host, or take one host's with " + set.Label + "@" + newest
			if named[i] {
				fix = "take one host's with " + strings.Split(set.Label, "@")[0] + "@" + newest + " (a host id: one hostname can be several states of one machine)"
			}
			return bad("%s pools runs of %d hosts that differ in %s: runs of unlike hosts are never pooled: %s", set.Label, len(ids), what, fix)
		}
		if len(ids) == 1 {
			one[i] = ids[0]
		}
	}
	for i := 1; i < len(sets); i++ {
		if one[0] == "" || one[i] == "" || one[i] == one[0] || named[0] && named[i] {
			continue
		}
		decl := declared(append(slices.Clip(sets[0].Runs), sets[i].Runs...))
		ds := slices.DeleteFunc(h.check(one[0]).Differences(h.check(one[i])), func(d host.Difference) bool { return slices.Contains(decl, d.Field) })
		if len(ds) == 0 {
			continue // the state the plan set per label: the question itself
		}
		what, err := h.differ(ctx, st, []string{one[0], one[i]}, decl)
		if err != nil {
			return err
		}
		base, other := strings.Split(sets[0].Label, "@")[0], strings.Split(sets[i].Label, "@")[0]
		return bad("%s and %s ran on hosts that differ in %s: the hosts' difference would pass for the labels': compare labels measured on one host, or name each label's host to compare across them (%s@%s %s@%s)",
			sets[0].Label, sets[i].Label, what, base, one[0], other, one[i])
	}
	return nil
}

// check is the stored fingerprint of host id, parsed.
func (h *hostOf) check(id string) host.Check {
	var c host.Check
	json.Unmarshal(h.fps[id], &c)
	return c
}

// differ words how hosts ids differ, each against the first: "boost (on
// on alpha/1a2b3c4d5e6f, off on alpha/6f5e4d3c2b1a)", the facts joined
// with "; ", less the facts skip names.
func (h *hostOf) differ(ctx context.Context, st *store.Store, ids []string, skip []string) (string, error) {
	names, err := hostNames(ctx, st)
	if err != nil {
		return "", err
	}
	first := h.check(ids[0])
	var fields []string
	vals := map[string][]string{} // field → each host's value
	for k, id := range ids[1:] {
		for _, d := range first.Differences(h.check(id)) {
			if slices.Contains(skip, d.Field) {
				continue
			}
			if _, ok := vals[d.Field]; !ok {
				fields = append(fields, d.Field)
				vals[d.Field] = make([]string, len(ids))
			}
			vals[d.Field][0], vals[d.Field][k+1] = d.A, d.B
		}
	}
	var parts []string
	for _, f := range fields {
		v := vals[f]
		var each []string
		for k, id := range ids {
			x := v[k]
			if x == "" {
				x = v[0] // as the first host
			}
			each = append(each, x+" on "+hostName(names, id))
		}
		parts = append(parts, f+" ("+strings.Join(each, ", ")+")")
	}
	return strings.Join(parts, "; "), nil
}

// hostNames are the hostnames each stored host's runs were written under.
func hostNames(ctx context.Context, st *store.Store) (map[string][]string, error) {
	hs, err := st.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, x := range hs {
		m[x.ID] = x.Hostnames
	}
	return m, nil
}

// hostName is a host as qpslab labels lists it: hostname/id, or its id.
func hostName(names map[string][]string, id string) string {
	if ns := names[id]; len(ns) > 0 {
		return ns[0] + "/" + id
	}
	return id
}
