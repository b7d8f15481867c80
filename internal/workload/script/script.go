// Package script owns the script suite: pgbench-style script files (the
// language is package lang's) run through the engine on PostgreSQL and
// the MySQL family, each event one pass of a script picked by weight.
// It owns pgbench's built-in scripts written per flavor, the init of the
// pgbench tables (through the loader: COPY, LOAD DATA) or of a user's
// --init script, the workers that run scripts on the lean client's
// prepared path, the retries of serialization failures and deadlocks
// (--max-tries), and the per-statement latencies (each statement an
// operation kind of the engine, as pgbench -r).
//
// It must not start servers, time runs or store anything (the plan and
// the engine do), and it drops or fills no table qpslab did not make
// (package owned), but what a user's --init script does itself.
package script

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/workload/script/lang"
)

// Name is the suite's name in the registry, the store and the CLI.
const Name = "script"

// InitTest is the init step's test name.
const InitTest = "init"

func init() { suite.Register(scriptSuite{}) }

type scriptSuite struct{}

var _ suite.Suite = scriptSuite{}

func (scriptSuite) Name() string { return Name }

func (scriptSuite) Summary() string {
	return "Your own workload: pgbench-style script files (or pgbench's built-in scripts) on PostgreSQL and the MySQL family"
}

func (scriptSuite) Help() string {
	return `Run pgbench-style script files (--file a.sql[@weight], repeatable) or
pgbench's built-in scripts (--builtin tpcb-like, simple-update, select-only,
written per flavor: END is COMMIT on the MySQL family) through qpslab's
engine, with everything the other suites have: closed and open loop,
thread lists, pairing, hardware cost per transaction, counters, stacks.

Each event is one pass of one script, picked by weight; TPS is the headline
(transactions/s). Every SQL statement is also an operation of its own
(SCRIPT_N: the script's Nth statement), with its rate and response times,
as pgbench -r reports. Serialization failures and deadlocks are retried up
to --max-tries tries (1: none, as pgbench), and counted: errors and retries,
and the transactions that failed every try as the "failed" operation's
errors.

Before the scripts, the init step: with --builtin, the pgbench tables at
--scale (scale × 1 branch, 10 tellers, 100,000 accounts), loaded by COPY or
LOAD DATA with primary keys as pgbench -i makes them; with --init FILE, your
own script run once (\set scale is predefined). The test's name is the
script set (tpcb-like; a.sql and b.sql with weights 5 and 1: a@5+b).
See docs/script.md.`
}

func (scriptSuite) Params() []suite.Param {
	return append([]suite.Param{
		{Name: "file", Kind: suite.List, Usage: "script file(s), each FILE[@WEIGHT] (comma-separated or repeated)"},
		{Name: "builtin", Kind: suite.List, Usage: "pgbench's built-in script(s), each NAME[@WEIGHT]: tpcb-like, simple-update, select-only"},
		{Name: "init", Kind: suite.String, Usage: "a script run once before the test instead of the pgbench tables' init (DDL and data; :scale is set)"},
		{Name: "scale", Kind: suite.Int, Default: "1", Usage: "pgbench's scale factor: :scale, and the pgbench tables' size (100,000 accounts per unit)"},
		{Name: "max-tries", Kind: suite.Int, Default: "1", Usage: "tries of a transaction that fails with a serialization failure or deadlock (1: no retry, as pgbench)"},
		{Name: "secs", Kind: suite.Seconds, Default: "60", Usage: "measured seconds of the test (pgbench -T)"},
		{Name: "no-init", Kind: suite.Bool, Usage: "skip the init: keep the tables a running sandbox has (with --sandbox)"},
	}, suite.ServerWorkloadParams()...)
}

// Layouts: the init, then the scripts.
func (scriptSuite) Layouts() []suite.Layout {
	return []suite.Layout{{Name: "scripts", Title: "the init, then the script sets", Groups: []string{"init", "scripts"},
		Members: map[string][]string{"init": {InitTest}, "scripts": {"*"}}}}
}

func (scriptSuite) Figures() []suite.Figure {
	fs := []suite.Figure{
		{Name: "qps", Unit: "transactions/s", HigherIsBetter: true, Per: "transaction", Tests: "the script set: script passes per second (pgbench's TPS)"},
		{Name: "qps", Unit: "rows/s", HigherIsBetter: true, Per: "row", Tests: InitTest},
		{Name: "SCRIPT_N/s", Unit: "statements/s", HigherIsBetter: true, Per: "s", Tests: "the script set: each statement (pgbench -r); SCRIPT_N.p50, .p95, .p99, .max its response times"},
		{Name: "SCRIPT/s", Unit: "transactions/s", HigherIsBetter: true, Per: "s", Tests: "the script set, with several scripts: each script's passes"},
	}
	return append(append(fs, suite.RetryFigures()...), suite.CommonFigures("qps")...)
}

// Conditions: an iobound workload and its cache.
func (scriptSuite) Conditions() []string { return suite.CacheConditions() }

func (scriptSuite) Tests() []suite.Test {
	return []suite.Test{
		{Name: InitTest, Role: result.RoleLoad, Groups: result.PlacementsOf(Name, InitTest), Note: "create and load the pgbench tables at --scale (or run --init FILE)"},
		{Name: "SCRIPTS", Role: result.RoleTest, Note: "the script set, named by its scripts (tpcb-like, a@5+b), for --secs"},
	}
}

// Set is a parsed script set: the scripts, their weights, and the
// operation kinds of their events and statements.
type Set struct {
	Name    string // the test's name: the scripts' names joined by +, each with @WEIGHT unless 1
	Scripts []*lang.Script
	Weights []int
	// Kinds are the scripts' event kinds ("" with one script: the event
	// is the run's totals); names their operation-kind names.
	Kinds []string
	names []string
	stmt  [][]string
}

// StatementKind is the operation kind of statement i of script k:
// "NAME_N", N counting from 1.
func (s *Set) StatementKind(k, i int) string { return s.stmt[k][i] }

// spec is one --file or --builtin value.
type spec struct {
	name, path string // path "" for a built-in
	weight     int
	builtin    bool
}

// Options are the suite's configured parameters.
type Options struct {
	specs    []spec
	texts    []string // each spec's text (a built-in's for each protocol: later)
	Init     string   // --init's path
	initText string
	Scale    int64
	MaxTries int
	Secs     time.Duration
	NoInit   bool
	name     string
	Cache    float64 // --workload iobound's cache fraction (0: cached)
}

func parseSpec(c *suite.Checker, flag, v string, builtin bool) (spec, bool) {
	s := spec{weight: 1, builtin: builtin}
	body := v
	if i := strings.LastIndexByte(v, '@'); i >= 0 {
		w, err := strconv.Atoi(v[i+1:])
		if err != nil || w < 0 || w > math.MaxInt32 {
			c.Problem("--%s %s: the weight after @ must be a whole number from 0 (e.g. a.sql@5)", flag, suite.Quote(v))
			return s, false
		}
		s.weight, body = w, v[:i]
	}
	if builtin {
		if _, ok := builtinText(body, "END;"); !ok {
			c.Problem("--builtin %s: use tpcb-like, simple-update or select-only", suite.Quote(v))
			return s, false
		}
		s.name = body
		return s, true
	}
	s.path = body
	s.name = strings.TrimSuffix(filepath.Base(body), ".sql")
	return s, true
}

// Configure reads the values, reads and parses every script (each problem
// a line, file:line, before anything starts) and makes the steps.
func (scriptSuite) Configure(v suite.Values) (*suite.Plan, error) {
	c := v.Check()
	o := Options{
		Scale:    c.Int("scale", 1, 1<<31),
		MaxTries: int(c.Int("max-tries", 1, 1<<20)),
		NoInit:   c.Bool("no-init"),
		Init:     c.String("init"),
		Cache:    c.Cache(),
	}
	o.Secs = c.Seconds("secs", false)
	for _, f := range c.List("file") {
		if s, ok := parseSpec(c, "file", f, false); ok {
			o.specs = append(o.specs, s)
		}
	}
	for _, b := range c.List("builtin") {
		if s, ok := parseSpec(c, "builtin", b, true); ok {
			o.specs = append(o.specs, s)
		}
	}
	if len(o.specs) == 0 && len(c.List("file"))+len(c.List("builtin")) == 0 {
		c.Problem("no script: give --file FILE[@WEIGHT] or --builtin tpcb-like|simple-update|select-only")
	}
	if o.NoInit && c.String("sandbox") == "" && c.String("target") == "" {
		c.Problem("--no-init keeps the tables of a server already up: use it with --sandbox or --target")
	}
	if o.NoInit && o.Init != "" {
		c.Problem("--no-init and --init: give one")
	}
	total := 0
	var names []string
	seen := map[string]int{}
	var parseErrs []string
	for i := range o.specs {
		s := &o.specs[i]
		total += s.weight
		n := s.name
		if s.weight != 1 {
			n += "@" + strconv.Itoa(s.weight)
		}
		names = append(names, n)
		if seen[s.name]++; seen[s.name] > 1 {
			c.Problem("script %s is given twice: give it once, with a weight (%s@2)", suite.Quote(s.name), s.name)
		}
		if s.builtin {
			text, _ := builtinText(s.name, "END;") // as pgbench's manual gives it; set writes it in the server's dialect
			o.texts = append(o.texts, text)
			continue
		}
		b, err := v.ReadFile(s.path)
		if err != nil {
			c.Problem("--file %s: %v", suite.Quote(s.path), err)
			o.texts = append(o.texts, "")
			continue
		}
		o.texts = append(o.texts, string(b))
		if _, err := lang.Parse(s.path, string(b)); err != nil {
			parseErrs = append(parseErrs, err.Error())
		}
	}
	if len(o.specs) > 0 && total == 0 {
		c.Problem("every script's weight is 0: give one a weight above 0")
	}
	if o.Init != "" {
		b, err := v.ReadFile(o.Init)
		if err != nil {
			c.Problem("--init %s: %v", suite.Quote(o.Init), err)
		} else if _, err := lang.Parse(o.Init, string(b)); err != nil {
			parseErrs = append(parseErrs, err.Error())
		} else {
			o.initText = string(b)
		}
	}
	o.name = strings.Join(names, "+")
	for _, e := range parseErrs {
		for _, line := range strings.Split(e, "\n") {
			c.Problem("%s", line)
		}
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return o.Plan()
}

// builtinInit: the init step makes the pgbench tables.
func (o Options) builtinInit() bool {
	if o.Init != "" {
		return false
	}
	for _, s := range o.specs {
		if s.builtin {
			return true
		}
	}
	return false
}

// set parses the scripts for dialect d (a built-in's END is written as
// the dialect's End).
func (o Options) set(d client.Dialect) (*Set, error) {
	s := &Set{Name: o.name}
	for i, sp := range o.specs {
		text, name := o.texts[i], sp.path
		if sp.builtin {
			text, _ = builtinText(sp.name, d.End)
			name = "builtin:" + sp.name
		}
		sc, err := lang.Parse(name, text)
		if err != nil {
			return nil, err
		}
		s.Scripts = append(s.Scripts, sc)
		s.Weights = append(s.Weights, sp.weight)
		kind := kindName(sp.name)
		s.names = append(s.names, kind)
		if len(o.specs) > 1 {
			s.Kinds = append(s.Kinds, kind)
		} else {
			s.Kinds = append(s.Kinds, "")
		}
		var ks []string
		for j := range sc.Statements {
			ks = append(ks, kind+"_"+strconv.Itoa(j+1))
		}
		s.stmt = append(s.stmt, ks)
	}
	return s, nil
}

// kindName is a script's name as an operation kind: lower case letters,
// digits, - and _.
func kindName(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "script"
	}
	return string(b)
}

// Plan makes the steps: the init (unless --no-init, or a set of files
// without --init), then the script set for --secs at every thread count.
func (o Options) Plan() (*suite.Plan, error) {
	p := &suite.Plan{
		Params: map[string]string{"scale": strconv.FormatInt(o.Scale, 10), suite.MaxTriesParam: strconv.Itoa(o.MaxTries), "scripts": o.name},
		RunsOn: suite.AnyDialect,
		Cache:  o.Cache,
	}
	suite.RecordCache(p.Params, o.Cache)
	if !o.NoInit && (o.builtinInit() || o.Init != "") {
		p.Steps = append(p.Steps, o.initStep())
	}
	p.Steps = append(p.Steps, o.testStep())
	return p, nil
}

func (o Options) initStep() suite.Step {
	params := map[string]string{"init": "pgbench"}
	if o.Init != "" {
		params["init"] = filepath.Base(o.Init)
	}
	return suite.Step{
		Test: InitTest, Role: result.RoleLoad, Groups: result.PlacementsOf(Name, InitTest), Threads: []int{1}, Params: params, Once: true, Sizes: true,
		Headline: suite.Headline{Unit: "rows/s", Op: "row", Series: result.SeriesRows, Value: func(t result.Totals) float64 { return t.RowsPerSec }},
		Task: &suite.Task{Run: func(ctx context.Context, s *suite.Server, threads int, seed uint64, io suite.TaskIO) (result.Totals, error) {
			if o.Init == "" {
				s.Log(fmt.Sprintf("init: the pgbench tables at scale %d", o.Scale))
				rows, err := initTables(ctx, s.Dialect, s.StorageEngine, s.Dial, o.Scale, io.Progress)
				return result.Totals{Rows: rows}, err
			}
			s.Log("init: running " + o.Init)
			return o.runInit(ctx, s, seed)
		}},
	}
}

// runInit runs the --init script once on one connection, its statements
// as text (DDL is seldom preparable).
func (o Options) runInit(ctx context.Context, s *suite.Server, seed uint64) (result.Totals, error) {
	sc, err := lang.Parse(o.Init, o.initText)
	if err != nil {
		return result.Totals{}, err
	}
	conn, err := s.Dial(ctx)
	if err != nil {
		return result.Totals{}, fmt.Errorf("init: connect: %w", err)
	}
	defer conn.Close()
	set := &Set{Scripts: []*lang.Script{sc}, Weights: []int{1}, Kinds: []string{""}, stmt: [][]string{make([]string, len(sc.Statements))}}
	w := &worker{wl: &Workload{Dialect: s.Dialect, Set: set, Scale: o.Scale, MaxTries: 1}, conn: conn,
		state: lang.NewState(seed, 0, map[string]lang.Value{"scale": o.Scale}), stmts: [][]*stmt{make([]*stmt, len(sc.Statements))}, text: true}
	if err := sc.Run(ctx, w.state, w); err != nil {
		return result.Totals{}, fmt.Errorf("init: %w", err)
	}
	return result.Totals{Events: 1, Statements: int64(w.o.Statements), Rows: w.o.Rows}, nil
}

func (o Options) testStep() suite.Step {
	writes := false
	for _, s := range o.specs {
		writes = writes || !(s.builtin && s.name == "select-only")
	}
	return suite.Step{
		Test: o.name, Order: 1, Role: result.RoleTest, Groups: result.PlacementsOf(Name, o.name),
		Params:  map[string]string{"scripts": o.name},
		Seconds: o.Secs, Slice: true, Writes: writes,
		Headline: suite.Headline{Unit: "transactions/s", Op: "transaction", Series: result.SeriesEvents, Value: func(t result.Totals) float64 { return t.TPS }},
		Drive: &suite.Drive{Retry: true, Workload: func(s *suite.Server, seed uint64) engine.Workload {
			set, err := o.set(s.Dialect)
			if err != nil {
				return suite.Failing(err) // a script that does not parse for the server's flavor
			}
			return &Workload{Dialect: s.Dialect, Dial: s.Dial, Set: set, Scale: o.Scale, MaxTries: o.MaxTries, Seed: seed}
		}},
	}
}

var _ suite.SQLer = scriptSuite{}

// SQLOf is the SQL of pgbench's tables and built-in scripts for a server
// of dialect d (what TestSQLIsTheDialects pins): the tables at scale 1,
// their keys, then each built-in script's text, its END the dialect's.
func (scriptSuite) SQLOf(d client.Dialect) []string {
	var out []string
	for _, tb := range tables(d, "", 1) {
		out = append(out, tb.DDL)
	}
	out = append(out, keys...)
	for _, name := range Builtins {
		text, _ := builtinText(name, d.End)
		out = append(out, text)
	}
	return out
}
