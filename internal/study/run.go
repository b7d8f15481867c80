package study

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
	"io"
)

// Env is what a study is given: the home, the store's DSN (--store; ""
// for the home's SQLite file), where to print, and how to run a plan of
// suite values into a results file, the builds in the sweep's order given
// (qpslab run's: app.Run, which the command passes in: study sits beside
// jobs, not above it).
type Env struct {
	Home     home.Home
	Store    string
	Out, Err io.Writer
	RunPlan  func(ctx context.Context, given map[string]string, file string, sweep []string) error
}

// RunOptions are what qpslab study SUITE takes beside the plan's values.
type RunOptions struct {
	Base      string       // the base build ("": the first)
	Size      string       // a Sizes name ("": small)
	Out       string       // the study's directory ("": <home>/reports/study-TIME)
	FromStore bool         // assemble from the store's runs of the builds; run nothing
	Findings  FindingsFunc // nil: Findings (the generated findings)
	// Summary adds the seeds' group summaries, a table per build against
	// the base, in one of their published layouts (report.SummarySeeds,
	// report.SummarySeedsApr2024) after the summary per group ("": none).
	Summary string
}

// Sizes are the plan values each --scale sets where the command line does
// not, for the parameters the suite takes: tiny for a smoke test, small
// for a sweep that ends in minutes, full for the suite's own defaults.
var Sizes = map[string]map[string]string{
	"tiny":  {"rows": "10000", "read-secs": "3", "write-secs": "3", "warmup": "0", "postwrite-scale": "0"},
	"small": {"rows": "100000", "read-secs": "30", "write-secs": "30", "warmup": "1", "postwrite-scale": "0"},
	"full":  {},
}

// Inputs are a study's checked input: the builds in sweep order, the
// base's index, the config.
type Inputs struct {
	Builds []string
	Base   int
	Config string
	Size   string
	// PerBuild, if set (--config-for), gives each build its config in
	// place of Config (ConfigFor, once the builds' versions are known).
	PerBuild config.PerBuild
	perBuild string // as given, for the commands
	Summary  string // RunOptions.Summary, for the commands
}

// Check checks what qpslab study was given before anything runs: two
// builds or more, each named once and a valid name, the base among them,
// one config, a known size. Its errors are one line naming the fix.
func Check(given map[string]string, o RunOptions) (Inputs, error) {
	var in Inputs
	for _, b := range strings.Split(given["build"], ",") {
		if b = strings.TrimSpace(b); b == "" {
			continue
		}
		if err := build.ValidName(b); err != nil {
			return in, fmt.Errorf("--build: %v", err)
		}
		if slices.Contains(in.Builds, b) {
			return in, fmt.Errorf("--build names %s twice: name each build once, in sweep order", b)
		}
		in.Builds = append(in.Builds, b)
	}
	if len(in.Builds) < 2 {
		return in, fmt.Errorf("qpslab study needs two builds or more: give --build B1,B2,… in sweep order (qpslab builds list; registry builds such as postgres-12.22.0 are fetched once)")
	}
	in.Base = 0
	if o.Base != "" {
		if in.Base = slices.Index(in.Builds, o.Base); in.Base < 0 {
			return in, fmt.Errorf("--base %s is not one of --build's builds (%s): name one of them", o.Base, strings.Join(in.Builds, ", "))
		}
	}
	in.Config = "default"
	if rules := strings.TrimSpace(given["config-for"]); rules != "" {
		if strings.TrimSpace(given["config"]) != "" {
			return in, fmt.Errorf("--config and --config-for exclude each other: --config-for gives each build its config")
		}
		m, err := config.ParsePerBuild(strings.Split(rules, ","))
		if err != nil {
			return in, err
		}
		in.PerBuild, in.perBuild, in.Config = m, rules, ""
	} else if c := strings.TrimSpace(given["config"]); c != "" {
		if strings.Contains(c, ",") {
			return in, fmt.Errorf("--config %s: a study compares builds under one config: give one (a study per config for more)", c)
		}
		in.Config = c
	}
	in.Size = o.Size
	if in.Size == "" {
		in.Size = "small"
	}
	if _, ok := Sizes[in.Size]; !ok {
		return in, fmt.Errorf("--scale %s: use tiny, small or full", in.Size)
	}
	in.Summary = o.Summary
	if o.Summary != "" && o.Summary != report.SummarySeeds && o.Summary != report.SummarySeedsApr2024 {
		return in, fmt.Errorf("--summary %s: use %s (the seeds' layout since July 2024: groups as rows) or %s (April 2024: statistics as rows, groups as columns)", suite.Quote(o.Summary), report.SummarySeeds, report.SummarySeedsApr2024)
	}
	return in, nil
}

// Run runs suite s on the builds of given (fetching registry builds that
// are missing, once) with the study's size, the base first in the plan
// (the plan pairs each build with it where their servers do not all fit
// together), then assembles the study of the runs and writes it; with
// FromStore it runs nothing and assembles the store's runs of the builds.
func Run(ctx context.Context, e Env, s suite.Suite, given map[string]string, o RunOptions) error {
	in, err := Check(given, o)
	if err != nil {
		return err
	}
	if _, err := plan.ValuesOf(s, given); err != nil {
		return err
	}
	if !o.FromStore {
		if err := fetch(ctx, e, in.Builds); err != nil {
			return err
		}
	}
	dir := o.Out
	if dir == "" {
		// Its time and random bits, made exclusively: two studies started
		// in the same second never share a folder.
		if err := home.EnsurePrivate(e.Home.Reports()); err != nil {
			return err
		}
		// (0700, its owner's alone.)
		if dir, err = os.MkdirTemp(e.Home.Reports(), "study-"+time.Now().UTC().Format("20060102-150405")+"-*"); err != nil {
			return fmt.Errorf("create the study's folder: %w", err)
		}
	}
	if err := home.EnsurePrivate(dir); err != nil {
		return err
	}
	labels, err := in.Labels(build.Registry{Dir: e.Home.Builds(), Cache: e.Home.Cache})
	if err != nil {
		return err
	}
	var sets []analysis.Set
	if !o.FromStore {
		if sets, err = runStudy(ctx, e, s, given, in, filepath.Join(dir, "study-runs.json"), labels); err != nil {
			return err
		}
	}
	st, err := store.Open(ctx, e.Store, e.Home.StoreFile())
	if err != nil {
		return err
	}
	defer st.Close()
	if o.FromStore {
		if sets, err = (selector.Selection{Suite: s.Name(), Samples: true}).Sets(ctx, st, labels); err != nil {
			return err
		}
	}
	base := []analysis.Set{sets[in.Base]}
	co := selector.Options(ctx, st, base, "", e.Err)
	findings := o.Findings
	if findings == nil {
		findings = Findings(co)
	}
	sd, err := Assemble(sets, Options{Base: in.Base, Compare: co, Findings: findings, Commands: Commands(s.Name(), given, in, dir, o.FromStore), Summary: o.Summary})
	if err != nil {
		return err
	}
	if err := Write(dir, "study", sd); err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "study: %s and %s\n", filepath.Join(dir, "study.md"), filepath.Join(dir, "study.html"))
	return nil
}

// Labels are the study's labels in sweep order: each build with the
// config (BUILD.CONFIG), its own by --config-for (from the build's version
// as the registry knows it, or as a registry build's name gives it: the
// plan gives it the same config).
func (in Inputs) Labels(reg build.Registry) ([]string, error) {
	labels := make([]string, len(in.Builds))
	for i, b := range in.Builds {
		c := in.Config
		if len(in.PerBuild) > 0 {
			v := ""
			if rb, err := reg.Get(context.Background(), b); err == nil {
				v = rb.Version
			} else if a, aerr := build.ParseArtifact(b); aerr == nil {
				v = a.Version
			}
			var ok bool
			if c, ok = in.PerBuild.ConfigFor(b, v); !ok {
				return nil, fmt.Errorf("--config-for: no rule names build %s (version %s): add one, such as %s=CONFIG or a version range", b, cmp.Or(v, "unknown"), b)
			}
		}
		labels[i] = label.Of(b, c, "").String()
	}
	return labels, nil
}

// fetch fetches the registry builds of builds that are not there yet
// (once: the cache keeps them); a build that is neither registered nor a
// registry build is refused with Get's error.
func fetch(ctx context.Context, e Env, builds []string) error {
	reg := build.Registry{Dir: e.Home.Builds(), Cache: e.Home.Cache}
	for _, b := range builds {
		_, err := reg.Get(ctx, b)
		if err == nil {
			continue
		}
		if _, perr := build.ParseArtifact(b); perr != nil {
			return err
		}
		if _, err := reg.Fetch(ctx, b, build.FetchOptions{Name: b, Log: e.Err}); err != nil {
			return err
		}
	}
	return nil
}

// runStudy runs the plan (the base first, the sweep's order given beside
// it: its neighbour pairs) into file, and reads its runs back as one set
// per label, in sweep order.
func runStudy(ctx context.Context, e Env, s suite.Suite, given map[string]string, in Inputs, file string, labels []string) ([]analysis.Set, error) {
	v := map[string]string{}
	for k, x := range given {
		v[k] = x
	}
	taken := map[string]bool{}
	for _, p := range plan.Params(s) {
		taken[p.Name] = true
	}
	for k, x := range Sizes[in.Size] {
		if _, set := given[k]; !set && taken[k] && plan.Declined(s, k) == "" {
			v[k] = x
		}
	}
	order := append([]string{in.Builds[in.Base]}, slices.Delete(slices.Clone(in.Builds), in.Base, in.Base+1)...)
	v["build"] = strings.Join(order, ",")
	if len(in.PerBuild) == 0 {
		v["config"] = in.Config
	}
	if err := e.RunPlan(ctx, v, file, in.Builds); err != nil {
		return nil, err
	}
	f, err := result.Read(file)
	if err != nil {
		return nil, err
	}
	at := map[string]int{}
	for i, b := range in.Builds {
		at[b] = i
	}
	sets := make([]analysis.Set, len(in.Builds))
	for _, r := range f.Runs {
		i, ok := at[r.Build]
		if !ok || r.Status != result.OK {
			continue
		}
		sets[i].Runs = append(sets[i].Runs, r)
	}
	for i := range sets {
		sets[i].Label = labels[i]
		if len(sets[i].Runs) == 0 {
			return nil, fmt.Errorf("%s has no ok runs in %s: see its log under %s", labels[i], file, e.Home.Logs())
		}
	}
	return sets, nil
}

// Commands are the commands that reproduce a study: the run, and its
// re-rendering from the store into dir. A study re-rendered from the store
// (fromStore) gets the second only: the store keeps the runs, not the
// command line that made them, and the flags of the re-rendering are not
// those of the run.
func Commands(suiteName string, given map[string]string, in Inputs, dir string, fromStore bool) []string {
	var flags []string
	var keys []string
	for k := range given {
		if k != "build" && k != "config" && k != "config-for" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		flags = append(flags, "--"+k+" "+quote(given[k]))
	}
	configs := " --config " + quote(in.Config)
	if in.perBuild != "" {
		configs = " --config-for " + quote(in.perBuild)
	}
	head := "qpslab study " + suiteName + " --build " + quote(strings.Join(in.Builds, ",")) + configs + " --base " + quote(in.Builds[in.Base])
	if in.Summary != "" {
		head += " --summary " + in.Summary
	}
	if fromStore {
		return []string{head + " --from-store --out " + quote(dir)}
	}
	run := head + " --scale " + in.Size
	if len(flags) > 0 {
		run += " " + strings.Join(flags, " ")
	}
	return []string{run + " --out " + quote(dir), head + " --from-store --out " + quote(dir)}
}

// quote is s as a shell word.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,_-/=:@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Write writes study sd into dir: NAME.md, NAME.html and each group's
// chart as NAME-GROUP.svg (the Markdown's images).
func Write(dir, name string, sd *Study) error {
	var md, page strings.Builder
	if err := sd.Markdown(&md, name); err != nil {
		return err
	}
	if err := sd.HTML(&page); err != nil {
		return err
	}
	files := map[string]string{name + ".md": md.String(), name + ".html": page.String()}
	for _, g := range sd.Cmp.Groups {
		if c := sd.Chart(g.Name); c != "" {
			// Standalone, the chart carries the page's chart style.
			files[ChartFile(name, g.Name)] = strings.Replace(string(c), "<title>", "<style>"+chartStyle+"</style><title>", 1) + "\n"
		}
	}
	var errs []error
	for f, text := range files {
		errs = append(errs, atomicfile.Write(filepath.Join(dir, f), []byte(text), 0o600))
	}
	return errors.Join(errs...)
}

// ScaleUsage is --scale's usage for a study of suite s: what a size sets
// among the parameters s takes (Sizes); for a suite that takes only the
// warm-up of them and measures --secs (tpcc, ycsb), that its own size and
// seconds keep their defaults.
func ScaleUsage(s suite.Suite) string {
	taken := map[string]bool{}
	for _, p := range plan.Params(s) {
		if plan.Declined(s, p.Name) == "" {
			taken[p.Name] = true
		}
	}
	if !taken["secs"] { // the sizes name no suite's --secs: such a suite keeps its own
		return "tiny, small or full: the rows, seconds and repeats the plan takes where not given (the study's size)"
	}
	return "tiny, small or full: the warm-up the plan takes where not given (the study's size; " + s.Name() + "'s own size and --secs keep their defaults: give them)"
}
