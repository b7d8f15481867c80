// Package selector owns which stored runs a question is about, for every
// surface: the commands (compare, metrics, report, stacks, detect, export),
// the dashboard and its JSON API all select through it, so that they
// cannot differ. A label is build.config, build.config:ENGINE (a storage
// engine other than InnoDB) or LABEL@HOST (one host's runs; ByHost puts a
// label once per host that ran it); a selection narrows by suite, thread
// count and host. History series are made here from the store's runs
// (history keys them by suite, test, host, config, flavor, thread count and
// conditions, engine included) and their change points found with the
// store's noise floors. It reads the store (and, for the commands only, a
// layout file --groups names) and hands runs to analysis; it
// prints nothing (report does) and offers no flags or parameters (cmd and
// serve do; its errors name them as the command line does).
package selector

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/store"
)

// Error is a question that cannot be answered as asked: NotFound says the
// store holds nothing that matches; otherwise the input is bad. Its text
// names the problem and the fix.
type Error struct {
	NotFound bool
	Msg      string
}

func (e *Error) Error() string { return e.Msg }

func bad(format string, a ...any) error {
	return &Error{Msg: fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...any) error {
	return &Error{NotFound: true, Msg: fmt.Sprintf(format, a...)}
}

// Selection narrows the runs of labels.
type Selection struct {
	Suite   string // "": any (needed when the labels hold runs of several suites)
	Threads int    // 0: any
	Host    string // a hostname, fleet agent name or host id prefix; "": any
	// ByHost puts each label without @HOST once per host that ran it.
	ByHost bool
	// Samples loads the runs' per-second samples (a single run a side is
	// judged by them; the HTML report draws them); Stacks their stacks.
	Samples, Stacks bool
	// See is where the labels are listed, for the errors' fix (default
	// "qpslab labels").
	See string
	// LayoutFiles lets a comparison's layout be a YAML file's path besides
	// a layout's name (the commands' --groups; never the API's groups=,
	// which must not read the server's files).
	LayoutFiles bool
}

// Check refuses a thread count below 0 (0 means any).
func (s Selection) Check() error {
	if s.Threads < 0 {
		return bad("--threads %d: give a thread count of 1 or more, or leave it out for all", s.Threads)
	}
	return nil
}

func (s Selection) see() string {
	if s.See == "" {
		return "qpslab labels"
	}
	return s.See
}

func (s Selection) narrowed() string {
	if s.Threads > 0 || s.Host != "" || s.Suite != "" {
		return " with this suite, thread count and host"
	}
	return ""
}

// ParseLabel reads a label: build.config or build.config:ENGINE, with
// @HOST after it for one host's runs (hostSel: the host named).
func ParseLabel(l string) (lb label.Label, hostSel string, err error) {
	name := l
	if i := strings.LastIndex(l, "@"); i >= 0 {
		name, hostSel = l[:i], l[i+1:]
		if hostSel == "" {
			return lb, "", bad("label %q names no host after @: give build.config@HOST (a hostname, fleet agent name or host id prefix; qpslab labels lists them)", l)
		}
	}
	lb, err = parseLabelOnly(name)
	return lb, hostSel, err
}

// parseLabelOnly reads a label without a host: build.config or
// build.config:ENGINE.
func parseLabelOnly(l string) (label.Label, error) {
	lb, err := label.Parse(l)
	if err != nil {
		return lb, bad("%v", err)
	}
	return lb, nil
}

// filter is the store filter of label lb on host (the selection's when "").
func (s Selection) filter(lb label.Label, host string) store.Filter {
	if host == "" {
		host = s.Host
	}
	return store.Filter{Suite: s.Suite, Build: lb.Build, Config: lb.Config, Threads: s.Threads, Host: host,
		Samples: s.Samples, Stacks: s.Samples || s.Stacks, StorageEngine: lb.StorageEngineFilter()}
}

// Sets reads the ok runs of each label, one set per label (per host of
// it with ByHost), labelled as runs are (mariadb-system.myrocks, not
// …:innodb) with the @HOST the label named. Runs of unlike hosts are
// refused, pooled in one label or set side by side unasked (hosts.go).
func (s Selection) Sets(ctx context.Context, st *store.Store, labels []string) ([]analysis.Set, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	var sets []analysis.Set
	var named []bool // the set names its host (unlikeHosts)
	for _, l := range labels {
		lb, hostSel, err := ParseLabel(l)
		if err != nil {
			return nil, err
		}
		if s.ByHost && hostSel == "" {
			hs, err := s.hostSets(ctx, st, lb)
			if err != nil {
				return nil, err
			}
			sets = append(sets, hs...)
			for range hs {
				named = append(named, true)
			}
			continue
		}
		runs, err := st.Runs(ctx, s.filter(lb, hostSel))
		if err != nil {
			return nil, err
		}
		if len(runs) == 0 {
			return nil, notFound("no ok results for %s%s: see %s", l, s.narrowed(), s.see())
		}
		name := lb.String()
		if hostSel != "" {
			name += "@" + hostSel
		}
		sets = append(sets, analysis.Set{Label: name, Runs: runs})
		named = append(named, hostSel != "")
	}
	if err := unlikeHosts(ctx, st, sets, named); err != nil {
		return nil, err
	}
	return sets, nil
}

// hostSets is one set of label lb per host that ran it (narrowed by
// Host), named LABEL@HOST, in host name order: the hostname (a fleet
// agent's name), with its host id when two hosts share the name.
func (s Selection) hostSets(ctx context.Context, st *store.Store, lb label.Label) ([]analysis.Set, error) {
	infos, err := st.Labels(ctx)
	if err != nil {
		return nil, err
	}
	type hostOf struct{ name, id string }
	var hosts []hostOf
	names := map[string]int{}
	for _, li := range infos {
		if li.Label != lb.String() || (s.Suite != "" && li.Suite != s.Suite) {
			continue
		}
		for _, x := range li.Hosts {
			name, id, _ := strings.Cut(x, "/")
			if s.Host != "" && name != s.Host && !strings.HasPrefix(id, s.Host) {
				continue
			}
			if !slices.Contains(hosts, hostOf{name, id}) {
				hosts = append(hosts, hostOf{name, id})
				names[name]++
			}
		}
	}
	sort.Slice(hosts, func(i, j int) bool {
		if hosts[i].name != hosts[j].name {
			return hosts[i].name < hosts[j].name
		}
		return hosts[i].id < hosts[j].id
	})
	var sets []analysis.Set
	for _, h := range hosts {
		sel, show := h.id, h.name
		if sel == "" || h.name == "" {
			sel, show = h.name+h.id, h.name+h.id
		} else if names[h.name] > 1 {
			show = h.name + "/" + h.id
		}
		runs, err := st.Runs(ctx, s.filter(lb, sel))
		if err != nil {
			return nil, err
		}
		if len(runs) > 0 {
			sets = append(sets, analysis.Set{Label: lb.String() + "@" + show, Runs: runs})
		}
	}
	if len(sets) == 0 {
		return nil, notFound("no ok results for %s on any host%s: see %s", lb, s.narrowed(), s.see())
	}
	return sets, nil
}

// Options are a comparison's options: the group layout, and the noise
// floors of the hosts the runs came from (qpslab run --aa; each test's
// runs their own host's: store.NoiseOf); a store that cannot give them is
// said on warn (nil: not said).
func Options(ctx context.Context, st *store.Store, sets []analysis.Set, layout string, warn io.Writer) analysis.Options {
	o := analysis.Options{Layout: layout}
	if st == nil || len(sets) == 0 || len(sets[0].Runs) == 0 {
		return o
	}
	noise, err := st.NoiseOf(ctx)
	if err != nil {
		if warn != nil {
			fmt.Fprintf(warn, "warning: no noise floor: %v\n", err)
		}
		return o
	}
	o.Noise = noise
	effects, err := st.RunEffectsOf(ctx)
	if err != nil {
		if warn != nil {
			fmt.Fprintf(warn, "warning: no between-run variance: %v\n", err)
		}
		return o
	}
	o.RunEffects = effects
	return o
}

// Compare loads the labels' runs with their seconds (a single run a side
// is judged by them) and compares the others with the first: the one
// comparison of qpslab compare, report, the dashboard's page and the API.
func (s Selection) Compare(ctx context.Context, st *store.Store, labels []string, layout string, warn io.Writer) (*analysis.Comparison, []analysis.Set, error) {
	if err := s.CompareArgs(labels); err != nil {
		return nil, nil, err
	}
	s.Samples = true
	sets, err := s.Sets(ctx, st, labels)
	if err != nil {
		return nil, nil, err
	}
	if len(sets) < 2 {
		return nil, nil, notFound("only %s has results: a comparison needs two; see %s for the hosts of each label", sets[0].Label, s.see())
	}
	o := Options(ctx, st, sets, layout, warn)
	if o.User, err = s.userLayout(sets, layout); err != nil {
		return nil, nil, err
	}
	cmp, err := analysis.Compare(sets[0], sets[1:], o)
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	return cmp, sets, nil
}

// CompareArgs checks the labels of a comparison before anything is read:
// BASE and OTHER…, or one label with ByHost; and the selection.
func (s Selection) CompareArgs(labels []string) error {
	if len(labels) < 2 && !(s.ByHost && len(labels) == 1) {
		return bad("give a BASE label and at least one OTHER (%s lists them), or one label with --by-host to put its hosts side by side", s.see())
	}
	return s.Check()
}

// Content gives a stored config's text by its id ("" when the store has
// none: imports may not).
func Content(ctx context.Context, st *store.Store) func(id string) string {
	return func(id string) string {
		_, c, _ := st.Config(ctx, id)
		return c
	}
}
