package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

func newRunCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "run",
		Short: "Run a benchmark suite against sandboxed builds",
	}
	c.AddCommand(newRunSysbenchCmd())
	return c
}

func newRunSysbenchCmd() *cobra.Command {
	var (
		builds                                []string
		cfgName, threads, out                 string
		readSecs, writeSecs, insertSecs, warm float64
		reportSecs                            int
		seed                                  int64
		transport, arrivals                   string
		listTests                             bool
		p                                     plan.Sysbench
	)
	c := &cobra.Command{
		Use:   "sysbench --build B --config C",
		Short: "Run the sysbench microbenchmarks (the reference harness's 42 tests, or its 2025 list) with qpslab's own client",
		Long: `Run the sysbench microbenchmarks as the reference harness (mytools
bench/sysbench.lua) runs them, with qpslab's own client: each build in a fresh
sandbox, tables loaded, then every test in the reference's order (the .pre
reads, the writes, a flush-and-wait after read-write_range=100, the post reads,
delete, insert), at each thread count. See docs/tests.md for the tests, their
SQL and their quirks.

Per test it prints QPS (statements/s, BEGIN and COMMIT included, as sysbench
counts; Krows/s for scan), TPS (events/s), rows/s, response and service time
percentiles, errors, and under each test its hardware cost per operation
(docs/metrics.md). Every run goes to the store as it runs (--store; label
build.config, for qpslab compare), and to a JSON file (--out) after every
test, so an interrupted run keeps what was measured.

Closed loop by default (--threads workers, each issuing its next event when
the last returns). With --rate, open loop: events arrive at that rate whatever
the server does; response time counts from each event's intended start,
service time from the actual send.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listTests {
				steps, err := p.Steps()
				if err != nil {
					return err
				}
				w := cmd.OutOrStdout()
				fmt.Fprintf(w, "%-36s %-6s %-5s %-8s %s\n", "TEST", "STMTS", "SECS", "GROUP5", "GROUP4")
				for _, t := range steps {
					fmt.Fprintf(w, "%-36s %-6d %-5s %-8s %s\n", t.Label(), t.Statements, t.Time, dash(t.Group5), dash(t.Group4))
				}
				return nil
			}
			h, err := resolveHome()
			if err != nil {
				return err
			}
			cleanAfterCrash(cmd, h)
			if len(builds) == 0 && p.Sandbox == "" {
				return fmt.Errorf("name the build(s) to run with --build (see qpslab builds list), or a running sandbox with --sandbox")
			}
			if len(builds) > 0 && p.Sandbox != "" {
				return fmt.Errorf("--build and --sandbox exclude each other: --sandbox runs on a server already started")
			}
			reg := build.Registry{Dir: h.Builds(), Cache: h.Cache}
			for _, name := range builds {
				b, err := reg.Get(cmd.Context(), name)
				if err != nil {
					return err
				}
				p.Builds = append(p.Builds, b)
			}
			if len(p.Builds) > 0 {
				if p.Config, err = (config.Store{Dir: h.Configs()}).Get(cfgName, config.FamilyOf(string(p.Builds[0].Flavor))); err != nil {
					return err
				}
			}
			if p.Threads, err = parseInts(threads); err != nil {
				return fmt.Errorf("--threads: %w", err)
			}
			if p.Client.Transport, err = client.ParseTransport(transport); err != nil {
				return err
			}
			if p.Arrivals, err = engine.ParseArrivals(arrivals); err != nil {
				return err
			}
			for _, s := range []float64{readSecs, writeSecs, insertSecs} {
				if s <= 0 {
					return fmt.Errorf("--read-secs, --write-secs and --insert-secs must be positive")
				}
			}
			p.Read, p.Write, p.Insert = secs(readSecs), secs(writeSecs), secs(insertSecs)
			p.Warmup = secs(warm)
			p.ReportInterval = time.Duration(reportSecs) * time.Second
			if cmd.Flags().Changed("seed") {
				p.Seed = uint64(seed)
			} else {
				p.Seed = rand.Uint64() >> 1
			}
			if err := p.Check(h); err != nil {
				return err
			}
			hc, err := host.Inspect(host.Real)
			if err != nil {
				return fmt.Errorf("record the host fingerprint: %w", err)
			}
			if p.Host, err = json.Marshal(hc); err != nil {
				return err
			}
			for _, r := range hc.Risks {
				fmt.Fprintf(cmd.ErrOrStderr(), "host variance risk: %s: %s (fix: %s)\n", r.Name, r.Detail, r.Fix)
			}
			if out == "" {
				out = filepath.Join(h.Results(), "sysbench-"+time.Now().UTC().Format("20060102-150405")+".json")
			}
			if err := home.Ensure(filepath.Dir(out)); err != nil {
				return err
			}
			return runSysbench(cmd, h, p, out)
		},
	}
	f := c.Flags()
	f.StringSliceVar(&builds, "build", nil, "build(s) to run, in turn (comma-separated or repeated)")
	f.StringVar(&cfgName, "config", "default", "config variant")
	f.IntVar(&p.Tables, "tables", 1, "tables (sbtest1..N)")
	f.Int64Var(&p.Rows, "rows", 1_000_000, "rows per table")
	f.StringVar(&threads, "threads", "1", "thread counts, comma-separated (e.g. 1,4,16)")
	f.Float64Var(&readSecs, "read-secs", 600, "seconds per read test (the reference: 600)")
	f.Float64Var(&writeSecs, "write-secs", 900, "seconds per write test (the reference: 900)")
	f.Float64Var(&insertSecs, "insert-secs", 900, "seconds for the insert test (the reference passes the write time)")
	f.Float64Var(&warm, "warmup", 5, "unmeasured seconds before each test (sysbench --warmup-time)")
	f.IntVar(&reportSecs, "report-interval", 10, "seconds between progress lines during a test (sysbench --report-interval)")
	f.StringVar(&p.List, "list", "2024", "test order: 2024 (the 42 tests) or head (the 2025 order; 32 reported)")
	f.StringSliceVar(&p.Tests, "tests", nil, "only tests whose label matches these globs (e.g. 'point-query*,read-only_range=10')")
	f.BoolVar(&listTests, "list-tests", false, "print the tests the run would execute, and exit")
	f.Float64Var(&p.Rate, "rate", 0, "open loop: events per second (0: closed loop)")
	f.StringVar(&arrivals, "arrivals", "poisson", "open-loop arrivals: poisson or uniform")
	f.IntVar(&p.MaxBacklog, "max-backlog", 0, "open loop: queued events that end the run (default max(1000, 10×rate))")
	f.IntVar(&p.Repeat, "repeat", 1, "run the whole plan K times, builds interleaved (A B A B …)")
	f.Int64Var(&seed, "seed", 0, "random seed (default: a new one, recorded with the results)")
	f.BoolVar(&p.Client.TCP, "tcp", false, "connect over loopback TCP instead of the unix socket")
	f.BoolVar(&p.Client.NoPrepare, "no-prepare", false, "text queries instead of server-side prepared statements")
	f.StringVar(&transport, "transport", "auto", "client transport: blocking, netpoll, or auto (blocking up to 256 connections)")
	f.Float64Var(&p.PostwriteScale, "postwrite-scale", 1, "scale the postwrite wait min(1200, 60+rows/1e6) s (0 to skip the wait)")
	f.IntVar(&p.LoadThreads, "load-threads", 2, "connections loading the tables in parallel")
	f.StringVar(&p.Sandbox, "sandbox", "", "run on this running sandbox (qpslab server start) instead of starting one per build")
	f.BoolVar(&p.NoLoad, "no-load", false, "keep the tables an earlier qpslab load left in the sandbox (with --sandbox)")
	f.StringVar(&p.Device, "device", "", "block device whose I/O is measured (default: the disk that holds the datadir)")
	f.StringVar(&out, "out", "", "results file (default <home>/results/sysbench-TIME.json)")
	return c
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer list such as 1,4,16", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func runSysbench(cmd *cobra.Command, h home.Home, p plan.Sysbench, out string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	st, err := openStore(cmd, h)
	if err != nil {
		return err
	}
	defer st.Close()
	var mu sync.Mutex
	var runs []result.Run
	fmt.Fprintf(stderr, "seed %d; results go to %s and %s\n", p.Seed, st.Where(), out)
	p.Log = func(line string) { fmt.Fprintln(stderr, line) }
	p.LoadBar = func(total int64) func(int64) { return loadBar(stderr, total) }
	header := false
	p.Record = func(start result.Run) (plan.Recorder, error) {
		w, err := st.Begin(cmd.Context(), start, store.Meta{ConfigContent: p.Config.Content})
		if err != nil {
			return nil, err
		}
		return recorder{w: w, done: func(r result.Run) error {
			mu.Lock()
			runs = append(runs, r)
			if !header {
				printHeader(stdout)
				header = true
			}
			printRun(stdout, r)
			ferr := result.Write(out, runs) // the file first: it is the copy if the store fails
			mu.Unlock()
			// Stored even when the run was interrupted: a fresh context.
			if err := w.Done(context.WithoutCancel(cmd.Context()), r); err != nil {
				return fmt.Errorf("%w (the result is in %s)", err, out)
			}
			return ferr
		}}, nil
	}
	err = p.Run(cmd.Context(), h)
	if len(runs) > 0 {
		fmt.Fprintf(stderr, "%d result(s) stored in %s (label %s) and written to %s\n", len(runs), st.Where(), labelsOf(runs), out)
	}
	return err
}

type recorder struct {
	w    *store.Writer
	done func(result.Run) error
}

func (r recorder) Sample(s result.Sample)  { r.w.Sample(s) }
func (r recorder) Done(x result.Run) error { return r.done(x) }

// labelsOf lists the build.config labels of runs, in order of appearance.
func labelsOf(runs []result.Run) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range runs {
		l := r.Build + "." + result.ConfigName(r.Config)
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return strings.Join(out, ", ")
}

func printHeader(w io.Writer) {
	fmt.Fprintf(w, "%-18s %-34s %4s %12s %10s %11s  %-36s %-36s %6s\n",
		"BUILD", "TEST", "THR", "QPS", "TPS", "ROWS/S", "RESPONSE ms p50/p95/p99/p99.9/max", "SERVICE ms p50/p95/p99/p99.9/max", "ERRORS")
	fmt.Fprintf(w, "  (each test's second line: hardware cost per op of the measured window; CPU µs/op host-wide, server process tree, client)\n")
}

func ms(l result.Latency) string {
	if l.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3g/%.3g/%.3g/%.3g/%.3g", l.P50/1000, l.P95/1000, l.P99/1000, l.P999/1000, l.Max/1000)
}

func printRun(w io.Writer, r result.Run) {
	t := r.Totals
	qps := fmt.Sprintf("%.1f", t.Reported)
	if t.ReportedUnit != "qps" {
		qps += " " + t.ReportedUnit
	}
	svc := "(same: closed loop)"
	if r.Loop == "open" {
		svc = ms(t.Service)
	}
	if r.Test == "load" {
		svc = ""
	}
	line := fmt.Sprintf("%-18s %-34s %4d %12s %10.1f %11.0f  %-36s %-36s %6d", r.Build, r.Test, r.Threads, qps, t.TPS, t.RowsPerSec, ms(t.Response), svc, t.Errors)
	if r.Status != result.OK {
		line += "  " + r.Status + ": " + r.Error
	}
	fmt.Fprintln(w, line)
	if r.HW != nil {
		fmt.Fprintln(w, hwLine(r.HW))
		for _, f := range r.HW.Flags {
			fmt.Fprintf(w, "    FLAG %s: %s\n", f.Name, f.Detail)
		}
	}
}

// hwLine is a result's hardware cost in the reference's metric names.
func hwLine(hw *result.HW) string {
	if hw.Samples < 2 {
		return "    hw: " + strings.Join(hw.Notes, "; ")
	}
	a := hw.Avg
	s := fmt.Sprintf("    hw: cpu/o %.6f cs/o %.3f r/o %.4f rKB/o %.3f wKB/o %.3f o/s %.0f | CPU µs/%s host %.1f server %.1f client %.1f | us %.0f sy %.0f wa %.0f st %.1f | rareq-sz %.1f %%util %.0f | rss %.0f MB",
		hw.CPUPerOp, hw.CSPerOp, hw.ReadsPerOp, hw.ReadKBPerOp, hw.WriteKBPerOp, hw.OpsPerSec, hw.Op,
		hw.HostCPUUsOp, hw.ServerCPUUsOp, hw.ClientCPUUsOp, a.User, a.System, a.IOWait, a.Steal, a.RareqSz, a.Util, float64(a.ServerRSS)/1024)
	if a.FreqMHz > 0 {
		s += fmt.Sprintf(" | %.2f GHz (%.2f–%.2f)", a.FreqMHz/1000, hw.FreqMinMHz/1000, hw.FreqMaxMHz/1000)
	}
	return s
}

// loadBar draws a progress bar on a terminal, and a line every 10 % elsewhere.
func loadBar(w io.Writer, total int64) func(int64) {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("load"),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("rows"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		return func(n int64) { bar.Set64(n) }
	}
	next := int64(0)
	return func(n int64) {
		if n >= next {
			fmt.Fprintf(w, "load: %d/%d rows (%d%%)\n", n, total, n*100/max(total, 1))
			next += max(total/10, 1)
		}
	}
}
