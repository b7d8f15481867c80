package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/suite"
)

// boostRun is a run whose labels differ in this host's boost (qpslab run
// --boost off,on): each config once per state, CONFIG-boost-off and
// CONFIG-boost-on, with the config's settings and nothing else (as an A/A
// run's labels are made), taking turns as configs do; the plan puts the
// host in each label's state before every part of it (plan.HostState),
// and the host is put back as it was when the run ends, however it ends
// (host.Boost: Restore, its guard on a kill, or the next --boost run).
type boostRun struct {
	sw    *host.Boost
	roots host.Roots
	on    map[string]bool // derived config name → boost on
}

// boostStates reads --boost: on, off, or both in the order the labels
// take (the first the base).
func boostStates(given []string) ([]bool, error) {
	var out []bool
	for _, s := range given {
		switch strings.TrimSpace(s) {
		case "on":
			out = append(out, true)
		case "off":
			out = append(out, false)
		default:
			return nil, fmt.Errorf("--boost %.40q: give on, off, or both (off,on: the first the base)", s)
		}
	}
	if len(out) == 2 && out[0] == out[1] || len(out) > 2 {
		return nil, fmt.Errorf("--boost %s: give each state once (off,on: the first the base)", strings.Join(given, ","))
	}
	return out, nil
}

// boostConfigs checks that --boost can run here and makes its labels: it
// refuses what it cannot switch under (--aa, --sandbox, --target, --set,
// --grid) and a host that cannot switch boost (a VM, a driver without a
// boost file, a user who may not write it), in one line each, before
// anything starts. The switch it returns holds the host's boost until
// restore.
func boostConfigs(ctx context.Context, h home.Home, v suite.Values, o RunOptions) (suite.Values, *boostRun, error) {
	given, roots, aa := o.Boost, o.Roots, o.AA
	states, err := boostStates(given)
	if err != nil {
		return v, nil, err
	}
	c := v.Check()
	for _, x := range []struct {
		set  bool
		flag string
		why  string
	}{
		{aa, "--aa", "an A/A run measures one state against itself"},
		{c.String("sandbox") != "", "--sandbox", "give --build and --config: each state is a label of its own, with a server of its own"},
		{len(c.List("target")) > 0, "--target", "a target's server runs on another host, whose boost this one cannot switch"},
		{len(c.List("set")) > 0 || c.String("grid") != "", "--set and --grid", "name the configs to run with --config"},
		{len(c.List("config-for")) > 0, "--config-for", "name the configs to run with --config (each state is a label per config)"},
	} {
		if x.set {
			return v, nil, fmt.Errorf("--boost cannot be given with %s: %s", x.flag, x.why)
		}
	}
	builds := c.List("build")
	if len(builds) == 0 {
		return v, nil, fmt.Errorf("name a build with --build (see qpslab builds list)")
	}
	sw, err := host.BoostSwitch(roots, h.BoostState())
	if err != nil {
		return v, nil, fmt.Errorf("--boost: %w", err)
	}
	b, err := (build.Registry{Dir: h.Builds(), Cache: h.Cache}).Get(ctx, builds[0])
	if err != nil {
		sw.Restore()
		return v, nil, err
	}
	cs := config.Store{Dir: h.Configs()}
	br := &boostRun{sw: sw, roots: roots, on: map[string]bool{}}
	var names []string
	for _, name := range c.List("config") {
		base, err := cs.Get(name, config.Family(b.Flavor.Describe().Family))
		if err != nil {
			sw.Restore()
			return v, nil, err
		}
		for _, on := range states {
			word := map[bool]string{true: "on", false: "off"}[on]
			n, err := ownLabel(cs, base, "boost-"+word, "A label of qpslab run --boost: %s's settings, run with this host's boost "+word+".")
			if err != nil {
				sw.Restore()
				return v, nil, err
			}
			names, br.on[n] = append(names, n), on
		}
	}
	return v.With("config", strings.Join(names, ",")), br, nil
}

// states gives each of p's labels (resolved) its state of the host: the
// host switched to it and checked there (fingerprint: the run's host
// fingerprint in that state), and guards the switch should qpslab die.
func (br *boostRun) states(p *plan.Runner, fingerprint func() (json.RawMessage, error)) error {
	if err := br.sw.Guard(); err != nil {
		return err
	}
	p.HostStates = map[string]plan.HostState{}
	for _, c := range p.Configs {
		on, ok := br.on[c.Name]
		if !ok {
			continue
		}
		if err := br.sw.Set(on); err != nil {
			return err
		}
		fp, err := fingerprint()
		if err != nil {
			return err
		}
		word := map[bool]string{true: "on", false: "off"}[on]
		p.HostStates[c.ID()] = plan.HostState{Name: "boost=" + word, Set: func() error { return br.sw.Set(on) }, Fingerprint: fp}
	}
	return nil
}

// restore puts the host's boost back as it was, saying so on w, or what
// could not be put back and how.
func (br *boostRun) restore(w io.Writer) error {
	done, err := br.sw.Restore()
	if err != nil {
		return fmt.Errorf("boost not put back (%v): qpslab host reset does not know it; write back what %s lists by hand", err, br.sw.StatePath())
	}
	var files []string
	for _, c := range done {
		files = append(files, c.Path+" = "+strings.TrimSpace(c.New))
	}
	if len(files) > 0 {
		fmt.Fprintf(w, "boost put back as it was: %s\n", strings.Join(slices.Compact(files), ", "))
	}
	return nil
}
