package app

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/study"
	"github.com/qpslab/qpslab/internal/suite"
)

// The actions of the commands on what is run (builds, configs, servers,
// the host), of metrics and stacks, and of study: cmd/qpslab wires their
// flags to them.

// Registry is the home's build registry.
func (e Env) Registry() build.Registry {
	return build.Registry{Dir: e.Home.Builds(), Cache: e.Home.Cache, Logs: e.Home.Logs()}
}

// Configs is the home's config store.
func (e Env) Configs() config.Store { return config.Store{Dir: e.Home.Configs()} }

// sayBuild is the line a build command ends with.
func (e Env) sayBuild(verb string, b build.Build, where string) {
	fmt.Fprintf(e.Out, "%s %s: %s %s at %s\n", verb, b.Name, b.Flavor, b.Version, where)
}

// BuildAdd registers given (an install prefix or a program) as a build of
// flavor (qpslab builds add).
func BuildAdd(ctx context.Context, e Env, flavor string, given build.Build, replace bool) error {
	b, err := e.Registry().AddFrom(ctx, flavor, given, replace)
	if err == nil {
		e.sayBuild("added build", b, b.Where())
	}
	return err
}

// BuildFetch fetches build name once into the cache (qpslab builds fetch).
func BuildFetch(ctx context.Context, e Env, name string, o build.FetchOptions) error {
	o.Log = e.Err
	b, err := e.Registry().Fetch(ctx, name, o)
	if err == nil {
		e.sayBuild("build", b, b.Basedir)
	}
	return err
}

// BuildCompile compiles a source tree into the cache and registers it
// (qpslab builds compile).
func BuildCompile(ctx context.Context, e Env, o build.CompileOptions) error {
	o.Progress = e.Err
	b, err := e.Registry().Compile(ctx, o)
	if err == nil {
		e.sayBuild("build", b, b.Where())
	}
	return err
}

// SourceOptions are qpslab builds source's flags: the Debian suite, the
// folder the package's files go to, and a mirror.
type SourceOptions struct{ Suite, Into, Mirror string }

// BuildSource downloads Debian source package nameVersion (NAME=VERSION)
// and prints its upstream tarball (qpslab builds source).
func BuildSource(ctx context.Context, e Env, nameVersion string, o SourceOptions) error {
	tar, err := e.Registry().DebianSource(ctx, o.Suite, nameVersion, o.Into, build.FetchOptions{Mirror: o.Mirror, Log: e.Err})
	if err == nil {
		fmt.Fprintln(e.Out, tar)
	}
	return err
}

// ConfigList prints the shipped configs and the home's own, and warns of
// those that do not read (qpslab configs list).
func ConfigList(e Env) error {
	cs, err := e.Configs().List()
	if err != nil {
		return err
	}
	report.Warnings(e.Err, config.Errors(cs))
	return report.Print(e.Out, config.ListTable(cs), "text")
}

// ConfigShow prints config name of family: its effective settings, or
// with own its file (qpslab configs show).
func ConfigShow(e Env, name, family string, own bool) error {
	cfg, err := e.Configs().Lookup(name, family)
	if err != nil {
		return err
	}
	return config.WriteShow(e.Out, cfg, own)
}

// ConfigAdd adds file as config name of family (qpslab configs add).
func ConfigAdd(e Env, name, file, family string, o config.AddOptions) error {
	cfg, err := e.Configs().AddFamily(name, file, family, o)
	if err == nil {
		config.SayAdded(e.Out, cfg)
	}
	return err
}

// ServerStop stops the named sandboxes, or all (qpslab server stop).
func ServerStop(e Env, names []string, all bool, timeout time.Duration) error {
	say := func(name string, was bool) { sandbox.SayStopped(e.Out, name, was, all) }
	return sandbox.StopNamed(e.Home, names, all, timeout, say)
}

// ServerStatus prints the named sandboxes, or all (qpslab server status).
func ServerStatus(e Env, names []string) error {
	Clean(e.Home, e.Err)
	sts, err := sandbox.States(e.Home, names...)
	if err != nil {
		return err
	}
	return report.Print(e.Out, sandbox.ListTable(sts), "text")
}

// ServerSQL runs query on sandbox name and prints its rows (qpslab server
// sql).
func ServerSQL(ctx context.Context, e Env, name, query string, tcp bool) error {
	cols, rows, err := sandbox.Query(ctx, e.Home, name, tcp, query)
	if err != nil {
		return err
	}
	return sandbox.WriteRows(e.Out, cols, rows)
}

// ServerPrune removes the sandboxes whose server is not running (qpslab
// server prune).
func ServerPrune(e Env, o sandbox.PruneOptions) error {
	if !o.DryRun {
		Clean(e.Home, e.Err)
	}
	removed, kept, err := sandbox.Prune(e.Home, o)
	sandbox.SayPruned(e.Out, removed, kept, o.DryRun)
	return err
}

// HostCheckOptions are qpslab host check's flags.
type HostCheckOptions struct {
	Roots                  host.Roots
	ServerCPUs, ClientCPUs string
	Datadir                string // default: the home's sandboxes folder
	JSON                   bool
}

// HostCheck prints qpslab host check: the host's check (JSON, or text with
// a note per registered build that runs on a C library other than the
// host's).
func HostCheck(ctx context.Context, e Env, o HostCheckOptions) error {
	c, err := host.CheckFor(o.Roots, o.ServerCPUs, o.ClientCPUs, cmp.Or(o.Datadir, e.Home.Sandboxes()))
	switch {
	case err != nil:
		return err
	case o.JSON:
		return report.HostCheckJSON(e.Out, c)
	}
	if err := report.HostCheck(e.Out, c); err != nil {
		return err
	}
	bs, err := e.Registry().List(ctx)
	if err != nil {
		return nil // the check stands without the builds
	}
	for _, n := range build.RuntimeNotes(bs) {
		fmt.Fprintln(e.Out, "note: "+n)
	}
	return nil
}

// HostTune switches boost off and governors to performance, saving the
// state before (qpslab host tune).
func HostTune(e Env, roots host.Roots) error {
	res, err := host.Tune(roots, e.Home.TuneState())
	report.HostTuned(e.Out, res, err == nil)
	return err
}

// HostReset puts back what HostTune changed (qpslab host reset).
func HostReset(e Env) error {
	done, err := host.Reset(e.Home.TuneState())
	report.HostReset(e.Out, done, err == nil)
	return err
}

// WithSets runs f on the sets sel selects of labels from the env's store
// (qpslab metrics, stacks).
func (e Env) WithSets(ctx context.Context, sel selector.Selection, labels []string, f func([]analysis.Set) error) error {
	return e.WithStore(ctx, func(st *store.Store) error {
		sets, err := sel.Sets(ctx, st, labels)
		if err != nil {
			return err
		}
		return f(sets)
	})
}

// Study runs (or with o.FromStore assembles) the study of suite s's plan
// given across builds (qpslab study SUITE).
func Study(ctx context.Context, e Env, s suite.Suite, given map[string]string, o study.RunOptions) error {
	run := func(ctx context.Context, v map[string]string, file string, sweep []string) error {
		return Run(ctx, e, s, v, RunOptions{Out: file, Sweep: sweep})
	}
	env := study.Env{Home: e.Home, Store: e.Store, Out: e.Out, Err: e.Err, RunPlan: run}
	return study.Run(ctx, env, s, given, o)
}

// ImportFacts are what an import of output that does not name them is
// told: the label, and the build's version, commit and time (qpslab
// import sysbench|mytools's flags).
type ImportFacts struct{ Label, Version, Commit, Time string }

// source checks the facts and makes them the import's source.
func (f ImportFacts) source() (importer.Source, error) {
	return selector.Source(f.Label, f.Version, f.Commit, f.Time, func(n string) string { return "--" + n + " " })
}

// ImportSysbench stores sysbench output files of test (qpslab import
// sysbench).
func ImportSysbench(ctx context.Context, e Env, files []string, f ImportFacts, test string) error {
	src, err := f.source()
	if err != nil {
		return err
	}
	runs, err := importer.SysbenchFiles(ctx, files, src, test)
	return Import(ctx, e, runs, err)
}

// ImportMytools stores a result folder of the reference harness (qpslab
// import mytools).
func ImportMytools(ctx context.Context, e Env, dir string, f ImportFacts) error {
	src, err := f.source()
	if err != nil {
		return err
	}
	runs, err := importer.Mytools(ctx, dir, src)
	return Import(ctx, e, runs, err)
}

// ImportResults stores qpslab results files (qpslab import results).
func ImportResults(ctx context.Context, e Env, files []string) error {
	runs, err := importer.ResultsFiles(ctx, files)
	return Import(ctx, e, runs, err)
}
