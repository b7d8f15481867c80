package dbbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// lim are the steps benchmark_compare.sh runs with a rate-limited writer.
var lim = map[string]bool{"multireadrandom": true, "revrangewhilewriting": true, "fwdrangewhilewriting": true, "readwhilewriting": true}

// resultLine is the benchmark whose line a step's figures come from.
var resultLine = map[string]string{
	"fillseq": "fillseq", "bulkload": "fillrandom", "revrange": "seekrandom", "readrandom": "readrandom",
	"fwdrange": "seekrandom", "multireadrandom": "multireadrandom", "overwritesome": "overwrite",
	"revrangewhilewriting": "seekrandomwhilewriting", "fwdrangewhilewriting": "seekrandomwhilewriting",
	"readwhilewriting": "readwhilewriting", "overwriteandwait": "overwrite",
}

// invocation is one db_bench command of a step: the flags that make the
// step what it is (benchmark.sh's for it), and the suite's own.
type invocation struct {
	step  []string // step flags the option set may override
	own   []string // reserved flags (--benchmarks, --num, --threads …): last
	timed bool     // runs for --duration
	total int64    // operations it will do, when it is counted (0: timed)
}

// common are benchmark.sh's flags for every step (const_params and
// level_const_params), at benchmark_compare.sh's settings scaled by --size.
func (o Options) common(wl, name string) []string {
	cache := o.CacheBytes(wl)
	shards := 0 // a small cache in 64 shards would hold less than a block per shard
	for shards < 6 && cache>>(shards+1) >= 512<<10 {
		shards++
	}
	rate := int64(0)
	if lim[name] {
		rate = int64(o.MBPerSec * (1 << 20))
	}
	return []string{
		"--key_size=" + strconv.Itoa(o.keyBytes()), "--value_size=" + strconv.Itoa(o.valueBytes()), "--block_size=8192",
		"--cache_size=" + strconv.FormatInt(cache, 10), "--cache_numshardbits=" + strconv.Itoa(shards),
		"--compression_max_dict_bytes=0", "--compression_ratio=0.5", "--compression_type=" + o.Compression,
		"--bytes_per_sync=1048576", "--benchmark_write_rate_limit=" + strconv.FormatInt(rate, 10),
		"--write_buffer_size=" + strconv.FormatInt(o.scaled(32), 10),
		"--target_file_size_base=" + strconv.FormatInt(o.scaled(32), 10),
		"--max_bytes_for_level_base=" + strconv.FormatInt(o.scaled(128), 10),
		"--verify_checksum=1", "--delete_obsolete_files_period_micros=62914560", "--max_bytes_for_level_multiplier=8",
		"--statistics=" + statistics(wl), "--stats_per_interval=1", "--stats_interval_seconds=20",
		"--memtablerep=skip_list", "--bloom_bits=10", "--open_files=-1", "--subcompactions=1",
		"--compaction_style=0", "--num_levels=8", "--min_level_to_compress=-1",
		"--level_compaction_dynamic_level_bytes=true", "--pin_l0_filter_and_index_blocks_in_cache=1",
	}
}

// statistics is --statistics of workload wl's steps: on for iobound, whose
// block cache misses (the tickers rocksdb.block.cache.miss and .hit) say,
// with the disk's reads per op, whether the run was IO-bound; off, as
// benchmark.sh has it, for cached. RocksDB's statistics cost some CPU;
// an option set that says --statistics=0 turns them off (the verdict is
// then judged on the disk's reads alone).
func statistics(wl string) string {
	if wl == IOBound {
		return "1"
	}
	return "0"
}

// paramsW are benchmark.sh's params_w beyond the common flags.
var paramsW = []string{"--level0_file_num_compaction_trigger=4", "--level0_slowdown_writes_trigger=20",
	"--level0_stop_writes_trigger=30", "--max_background_jobs=8", "--max_write_buffer_number=8"}

// invocations are the db_bench commands of step name at threads, as
// benchmark.sh's job of that name runs them (h says what this db_bench
// knows: meta operations and flags of later versions).
func (o Options) invocations(wl, name string, threads int, h *Help) []invocation {
	keys := o.Keys()
	secs := strconv.FormatInt(int64(math.Max(1, math.Round(o.Seconds.Seconds()))), 10)
	th := strconv.Itoa(threads)
	timed := func(bench string, extra ...string) invocation {
		return invocation{step: append(append([]string{}, paramsW...), extra...),
			own: []string{"--benchmarks=" + bench + ",stats", "--use_existing_db=1", "--num=" + strconv.FormatInt(keys, 10), "--threads=" + th, "--duration=" + secs}, timed: true}
	}
	switch name {
	case "fillseq":
		return []invocation{{
			step: append(append([]string{"--allow_concurrent_memtable_write=false"}, paramsW...), "--min_level_to_compress=0", "--sync=0",
				"--memtablerep=vector", "--allow_concurrent_memtable_write=false", "--disable_wal=1"),
			own: []string{"--benchmarks=fillseq,stats", "--use_existing_db=0", "--num=" + strconv.FormatInt(keys, 10), "--threads=1"}, total: keys}}
	case "bulkload":
		m10 := strconv.Itoa(10 << 20)
		return []invocation{{
			step: []string{"--max_background_jobs=8", "--max_write_buffer_number=8", "--allow_concurrent_memtable_write=false",
				"--level0_file_num_compaction_trigger=" + m10, "--level0_slowdown_writes_trigger=" + m10, "--level0_stop_writes_trigger=" + m10,
				"--disable_auto_compactions=1", "--sync=0", "--memtablerep=vector", "--disable_wal=1"},
			own: []string{"--benchmarks=fillrandom,stats", "--use_existing_db=0", "--num=" + strconv.FormatInt(keys, 10), "--threads=1"}, total: keys,
		}, {
			step: append(append([]string{}, paramsW...), "--disable_auto_compactions=1", "--sync=0"),
			own:  []string{"--benchmarks=compact,stats", "--use_existing_db=1", "--num=" + strconv.FormatInt(keys, 10), "--threads=1"},
		}}
	case "revrange": // benchmark_compare.sh: NUM_KEYS=100 NUM_THREADS=1 DURATION=300
		inv := timed("seekrandom", "--seek_nexts=10", "--reverse_iterator=true")
		inv.own = []string{"--benchmarks=seekrandom,stats", "--use_existing_db=1", "--num=100", "--threads=1",
			"--duration=" + strconv.FormatInt(int64(math.Max(1, math.Round(o.Settle.Seconds()))), 10)}
		return []invocation{inv}
	case "readrandom":
		return []invocation{timed("readrandom")}
	case "fwdrange":
		return []invocation{timed("seekrandom", "--seek_nexts=10", "--reverse_iterator=false")}
	case "multireadrandom":
		extra := []string{"--batch_size=10"}
		if _, ok := h.Flags["multiread_batched"]; ok {
			extra = append(extra, "--multiread_batched=true")
		}
		return []invocation{timed("multireadrandom", extra...)}
	case "overwritesome":
		writes := max(1, int64(math.Round(float64(keys)/float64(threads)/10)))
		return []invocation{{step: append(append([]string{}, paramsW...), "--sync=0", "--merge_operator=put"),
			own: []string{"--benchmarks=overwrite,stats", "--use_existing_db=1", "--num=" + strconv.FormatInt(keys, 10), "--threads=" + th,
				"--writes=" + strconv.FormatInt(writes, 10)}, total: writes * int64(threads)}}
	case "flush_mt_l0":
		return []invocation{{step: append(append([]string{}, paramsW...), "--sync=0"),
			own: []string{"--benchmarks=levelstats,flush,waitforcompaction,compact0,waitforcompaction,memstats,levelstats,stats",
				"--use_existing_db=1", "--num=" + strconv.FormatInt(keys, 10), "--threads=1"}}}
	case "revrangewhilewriting", "fwdrangewhilewriting":
		rev := strconv.FormatBool(name == "revrangewhilewriting")
		return []invocation{timed("seekrandomwhilewriting", "--sync=0", "--merge_operator=put", "--seek_nexts=10", "--reverse_iterator="+rev)}
	case "readwhilewriting":
		return []invocation{timed("readwhilewriting", "--sync=0", "--merge_operator=put")}
	case "overwriteandwait":
		inv := timed("overwrite", "--sync=0", "--merge_operator=put")
		if h.Knows("waitforcompaction") { // benchmark_compare.sh: overwrite alone where it is missing
			inv.own[0] = "--benchmarks=overwrite,waitforcompaction,stats"
		}
		return []invocation{inv}
	case ycsbLoad: // YCSB's load: every key once, in random order (filluniquerandom runs at one thread), WAL on
		return []invocation{{step: append(append([]string{}, paramsW...), "--sync=0"),
			own: []string{"--benchmarks=filluniquerandom,stats", "--use_existing_db=0", "--num=" + strconv.FormatInt(keys, 10), "--threads=1"}, total: keys}}
	case ycsbSettle:
		return []invocation{{step: append(append([]string{}, paramsW...), "--sync=0"),
			own: []string{"--benchmarks=flush,waitforcompaction,stats", "--use_existing_db=1", "--num=" + strconv.FormatInt(keys, 10), "--threads=1"}}}
	}
	if w, ok := ycsbWorkloadNamed(name); ok {
		return []invocation{timed(w.bench, append(append([]string{}, w.flags...), "--sync=0")...)}
	}
	panic("dbbench: no step " + name)
}

// stepRun is one run of step name of workload wl on server s: its
// database folder (db), the option set's flags (opts), its seed, and
// where its samples and progress go.
type stepRun struct {
	Options
	s            *suite.Server
	wl, name, db string
	opts         []string
	seed         uint64
	tio          suite.TaskIO
}

// command is one db_bench command of a step: what it runs, its whole
// command line, and the files its output and its report go to.
type command struct {
	invocation
	args        []string
	log, report string
}

// command is the i-th command of the step, inv, in the step's database:
// the common flags, the step's, the option set's (which override both),
// the suite's own, and the report file and seed.
func (r stepRun) command(i int, inv invocation) command {
	tag := fmt.Sprintf("%s.%d", r.name, i+1)
	c := command{invocation: inv, log: filepath.Join(r.s.Datadir, r.wl+"."+tag+".log"), report: filepath.Join(r.s.Datadir, r.wl+"."+tag+".report.csv")}
	args := append(r.common(r.wl, r.name), inv.step...)
	args = append(args, r.opts...)
	args = append(args, "--db="+r.db, "--wal_dir="+r.db)
	args = append(args, inv.own...)
	sd := int64(r.seed & math.MaxInt64)
	if sd == 0 {
		sd = 1 // 0 asks db_bench for a seed from the clock
	}
	c.args = append(args, "--histogram=1", "--report_interval_seconds=1", "--report_file="+c.report, "--seed="+strconv.FormatInt(sd, 10))
	return c
}

// prepare is the load's Before: the workload's database folder, empty, and
// the readahead warning.
func (o Options) prepare(wl string) func(ctx context.Context, s *suite.Server) error {
	return func(ctx context.Context, s *suite.Server) error {
		dir := dbDir(s, wl)
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("empty %s: %w", dir, err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("make %s: %w", dir, err)
		}
		w, err := o.readahead(ctx, s)
		if err != nil {
			return err
		}
		if _, seen := o.warned.LoadOrStore(w, true); w != "" && !seen {
			s.Warn(w)
		}
		return nil
	}
}

// drop is the workload's last step's After: its database goes, so that the
// next workload has the disk to itself.
func (o Options) drop(wl string) func(ctx context.Context, s *suite.Server) error {
	return func(ctx context.Context, s *suite.Server) error {
		if err := os.RemoveAll(dbDir(s, wl)); err != nil {
			return fmt.Errorf("remove the %s database: %w", wl, err)
		}
		return nil
	}
}

// readahead is the warning of a compaction readahead above the largest
// request the datadir's disks take whole (RocksDB issue 12038: such
// compaction reads have been seen to reach the disk as ~4 KB requests);
// "" when there is none.
func (o Options) readahead(ctx context.Context, s *suite.Server) (string, error) {
	h, err := helpOf(ctx, s.Program, s.Env)
	if err != nil {
		return "", err
	}
	opts, err := o.options(s.Config, h, s.Flavor+" "+s.Version)
	if err != nil {
		return "", err
	}
	v := flagSetting(opts, h, "compaction_readahead_size")
	ra, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ra <= 0 {
		return "", nil
	}
	st := host.StorageOf(host.Real, s.Datadir)
	d, ok := st.SmallestMaxSectors()
	if !ok || ra <= int64(d.MaxSectorsKB)<<10 {
		return "", nil
	}
	whose := "this db_bench's default"
	for _, a := range opts {
		if strings.HasPrefix(a, "--compaction_readahead_size=") {
			whose = "set by config " + s.Config.Name
		}
	}
	return fmt.Sprintf("readahead: compaction_readahead_size %d KB (%s) is above max_sectors_kb %d of %s, which holds the datadir: compaction reads may reach the disk as small requests (RocksDB issue 12038; watch rareq-sz); set --compaction_readahead_size=%dK or less in the option set, or raise /sys/block/%s/queue/max_sectors_kb",
		ra>>10, whose, d.MaxSectorsKB, d.Name, d.MaxSectorsKB, d.Name), nil
}

// finish records, with each run of step name of workload wl, the
// compaction readahead the db_bench ran with (readahead_kb: as RocksDB
// wrote it in the database's OPTIONS file, after its own sanitizing) and
// the datadir disk's max_sectors_kb beside it; marks a run whose
// readahead is above that (its figures are at that risk); and judges an
// iobound test step IO-bound or not (counters.IOBound: the disk's reads
// per op, and the block cache's misses per op from --statistics), with a
// warning where it was not. Only the steps that read are judged: a
// write-only step's block cache misses are its compaction's, whose reads
// go to the disk in readahead-sized requests, a few per hundred misses.
func (o Options) finish(wl string, st step) func(ctx context.Context, s *suite.Server, r *result.Run) error {
	return func(ctx context.Context, s *suite.Server, r *result.Run) error {
		if r.Totals.Figures == nil {
			r.Totals.Figures = map[string]float64{}
		}
		if kb, ok := o.effectiveReadahead(ctx, s, wl); ok {
			r.Totals.Figures[FigureReadaheadKB] = kb
		}
		if d, ok := host.StorageOf(host.Real, s.Datadir).SmallestMaxSectors(); ok {
			r.Totals.Figures[FigureMaxSectorsKB] = float64(d.MaxSectorsKB)
		}
		w, err := o.readahead(ctx, s)
		if err != nil {
			return err
		}
		if w != "" && r.HW != nil {
			r.HW.Flags = append(r.HW.Flags, result.Flag{Name: "readahead", Detail: strings.TrimPrefix(w, "readahead: ")})
		}
		if wl != IOBound || st.role != result.RoleTest || st.group == GroupWrite {
			return nil
		}
		if v, ok := counters.IOBound(*r); ok {
			r.Verdicts = append(r.Verdicts, v)
			if !v.OK {
				s.Warn(fmt.Sprintf("%s with config %s: asked to be IO-bound, and was not: %s", r.Test, s.Config.Name, v.Detail))
			}
		}
		return nil
	}
}

// effectiveReadahead is the compaction readahead, in KB, of workload wl's
// database as RocksDB last wrote its options (the newest OPTIONS-NNNNNN
// file: RocksDB 6.x and 7.x raise 0 to 2 MB under O_DIRECT for
// compaction, which the flags do not say), else the option set's or the
// db_bench's default.
func (o Options) effectiveReadahead(ctx context.Context, s *suite.Server, wl string) (float64, bool) {
	if v, ok := optionsFileSetting(dbDir(s, wl), "compaction_readahead_size"); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			return float64(n) / 1024, true
		}
	}
	h, err := helpOf(ctx, s.Program, s.Env)
	if err != nil {
		return 0, false
	}
	opts, err := o.options(s.Config, h, s.Flavor+" "+s.Version)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(flagSetting(opts, h, "compaction_readahead_size"), 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return float64(n) / 1024, true
}

// optionsFileSetting is option name's value in the newest OPTIONS file of
// the database in db (RocksDB's own record of the options it runs with:
// "  compaction_readahead_size=2097152").
func optionsFileSetting(db, name string) (string, bool) {
	files, _ := filepath.Glob(filepath.Join(db, "OPTIONS-*"))
	newest, num := "", int64(-1)
	for _, f := range files {
		n, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(f), "OPTIONS-"), 10, 64)
		if err == nil && n > num {
			newest, num = f, n
		}
	}
	if newest == "" {
		return "", false
	}
	raw, err := os.ReadFile(newest)
	if err != nil {
		return "", false
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+"="); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// run is the task of step name of workload wl.
func (o Options) run(wl, name string) func(ctx context.Context, s *suite.Server, threads int, seed uint64, tio suite.TaskIO) (result.Totals, error) {
	return func(ctx context.Context, s *suite.Server, threads int, seed uint64, tio suite.TaskIO) (result.Totals, error) {
		if s.Start == nil {
			return result.Totals{}, fmt.Errorf("db_bench runs in a scratch sandbox: the plan gave none")
		}
		h, err := helpOf(ctx, s.Program, s.Env)
		if err != nil {
			return result.Totals{}, err
		}
		opts, err := o.options(s.Config, h, s.Flavor+" "+s.Version)
		if err != nil {
			return result.Totals{}, err
		}
		if name == "flush_mt_l0" && !h.Knows("waitforcompaction") {
			s.Log(fmt.Sprintf("flush_mt_l0: db_bench %s has no waitforcompaction (benchmark_compare.sh skips it on such versions)", s.Version))
			return result.Totals{}, nil
		}
		if name == ycsbSettle && !(h.Knows("waitforcompaction") && h.Knows("flush")) {
			s.Log(fmt.Sprintf("settle: db_bench %s has no flush and waitforcompaction: the workloads start from the load as it left the database", s.Version))
			return result.Totals{}, nil
		}
		r := stepRun{Options: o, s: s, wl: wl, name: name, db: dbDir(s, wl), opts: opts, seed: seed, tio: tio}
		var out *Output
		second := 0
		for i, inv := range o.invocations(wl, name, threads, h) {
			res, n, err := r.invoke(ctx, r.command(i, inv), second)
			second = n
			if err != nil {
				return result.Totals{}, fmt.Errorf("%s: %w", name, err)
			}
			if i == 0 {
				out = res // the step's figures are its first command's (bulkload: the load, not its compaction)
			}
		}
		bench, ok := resultLine[name]
		var kinds map[string]string
		if w, y := ycsbWorkloadNamed(name); y {
			bench, ok, kinds = w.bench, true, w.kinds
		} else if name == ycsbLoad {
			bench, ok = "filluniquerandom", true
		}
		if !ok { // a step that only flushes and waits: its statistics
			f := out.Figures(BenchLine{}, nil)
			delete(f, "ops_sec")
			delete(f, "usec_op")
			return result.Totals{Figures: f}, nil
		}
		return totals(out, bench, kinds)
	}
}

// totals are a step's totals from db_bench's output: operations and time
// from its result line (or its histograms' count where the line has none),
// the latencies from its histograms (all its operations together), the
// rest as figures. kinds, for a YCSB workload, name its histograms'
// operations as YCSB's kinds, each with its rate and latencies.
func totals(out *Output, bench string, kinds map[string]string) (result.Totals, error) {
	b, ok := out.Bench(bench)
	if !ok {
		return result.Totals{}, fmt.Errorf("db_bench printed no result line for %s", bench)
	}
	var h *Histogram
	hists := out.HistsOf(b)
	if kinds == nil && len(hists) > 1 {
		hists = hists[:1] // benchmark_compare.sh's steps: the first, their reads (a writer's beside them are not the step's)
	}
	if len(hists) > 0 {
		m := Merge(hists)
		h = &m
	}
	t := result.Totals{Seconds: b.Seconds, Events: b.Ops, Figures: out.Figures(b, h)}
	switch {
	case t.Events > 0: // "… seconds N operations" (6.x on)
	case b.Of > 0:
		t.Events = b.Of // "(N of M found)": keys read (a multiread's histogram counts its batches)
	case h != nil:
		t.Events = h.Count
	}
	if t.Seconds == 0 && b.OpsPerSec > 0 {
		t.Seconds = float64(t.Events) / b.OpsPerSec
	}
	if h != nil && h.Count > 0 {
		l := latencyOf(*h)
		t.Response, t.Service = l, l
	}
	cacheFigures(out, t.Events, t.Figures)
	t.Ops = ycsbOps(kinds, hists, t.Seconds)
	for k, v := range t.Figures {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return result.Totals{}, fmt.Errorf("db_bench printed %s %v, which no measurement gives: see its output", k, v)
		}
	}
	if err := (result.Run{Test: bench, Totals: t}).Check(); err != nil {
		return result.Totals{}, fmt.Errorf("db_bench's output: %w", err)
	}
	return t, nil
}

// latencyOf is a --histogram block as a run's latencies (µs): db_bench's
// percentiles where it printed them, else interpolated from the buckets,
// and p95 from the buckets, as RocksDB computes its percentiles.
func latencyOf(h Histogram) result.Latency {
	l := result.Latency{Count: h.Count, Min: h.Min, Mean: h.Average, P50: h.P50, P99: h.P99, P999: h.P999, Max: h.Max}
	if !h.HasPercentiles {
		l.P50, l.P99, l.P999 = h.Percentile(50), h.Percentile(99), h.Percentile(99.9)
	}
	if p95 := h.Percentile(95); !math.IsNaN(p95) {
		l.P95 = p95
	}
	return l
}

// invoke runs db_bench command c to its end: tied to qpslab in the
// sandbox, its output into its log, its report file read once a second
// for the run's samples (numbered on from second) and progress. It
// returns what db_bench printed and the next sample's second. Cancelled,
// db_bench gets SIGINT (then SIGKILL); what it reported so far is kept as
// samples.
func (r stepRun) invoke(ctx context.Context, c command, second int) (*Output, int, error) {
	o, s, args, logPath, reportPath, inv, tio := r.Options, r.s, c.args, c.log, c.report, c.invocation, r.tio
	log, err := os.Create(logPath)
	if err != nil {
		return nil, second, fmt.Errorf("db_bench's output: %w", err)
	}
	defer log.Close()
	s.Log(s.Program + " " + strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, s.Program, args...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = s.Env, s.Datadir, log, log
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 30 * time.Second
	wait, err := s.Start(cmd)
	if err != nil {
		return nil, second, fmt.Errorf("start %s: %w", s.Program, err)
	}
	tail := &reportTail{path: reportPath, second: second}
	var done int64
	emit := func() {
		for _, smp := range tail.read() {
			tio.Sample(smp)
			done += smp.Events
			if inv.timed {
				tio.Progress(int64(smp.Second-second+1), int64(o.Seconds.Seconds()))
			} else if inv.total > 0 {
				tio.Progress(min(done, inv.total), inv.total)
			}
		}
	}
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				emit()
			}
		}
	}()
	werr := wait()
	close(stop)
	<-polled
	emit()
	raw, _ := os.ReadFile(logPath)
	if werr != nil {
		if ctx.Err() != nil {
			return nil, tail.second, ctx.Err()
		}
		return nil, tail.second, fmt.Errorf("db_bench %s: %s (its output: %s)", exitText(werr), lastWords(raw), logPath)
	}
	out, err := Parse(bytes.NewReader(raw))
	return out, tail.second, err
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	return err.Error()
}

// lastWords are the lines of db_bench's output that say why it failed: its
// ERROR lines, else its last line.
func lastWords(raw []byte) string {
	var errs []string
	last := ""
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" {
			continue
		}
		last = l
		if strings.Contains(l, "ERROR") || strings.HasPrefix(l, "Invalid") || strings.Contains(l, "error") {
			errs = append(errs, l)
		}
	}
	if len(errs) > 0 {
		return strings.Join(errs, " | ")
	}
	if last == "" {
		return "no output"
	}
	return last
}

// reportTail reads db_bench's report file (--report_file: a header, then
// "seconds,ops in the last interval" once a second) as it grows, a whole
// line at a time.
type reportTail struct {
	path    string
	off     int64
	partial []byte
	second  int // the next sample's number
}

func (t *reportTail) read() []result.Sample {
	f, err := os.Open(t.path)
	if err != nil {
		return nil // not written yet
	}
	defer f.Close()
	if _, err := f.Seek(t.off, 0); err != nil {
		return nil
	}
	buf := new(bytes.Buffer)
	n, _ := buf.ReadFrom(f)
	t.off += n
	data := append(t.partial, buf.Bytes()...)
	cut := bytes.LastIndexByte(data, '\n')
	if cut < 0 {
		t.partial = data
		return nil
	}
	t.partial = append([]byte(nil), data[cut+1:]...)
	var out []result.Sample
	for _, l := range strings.Split(string(data[:cut]), "\n") {
		secs, ops, ok := reportLine(l)
		if !ok || secs <= 0 {
			continue
		}
		out = append(out, result.Sample{Second: t.second, Events: ops})
		t.second++
	}
	return out
}

// reportLine reads "2,21777": seconds since the start, ops in the interval.
func reportLine(l string) (int, int64, bool) {
	a, b, ok := strings.Cut(strings.TrimSpace(l), ",")
	if !ok {
		return 0, 0, false
	}
	secs, err1 := strconv.Atoi(a)
	ops, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil || ops < 0 || math.IsInf(ops, 0) || math.IsNaN(ops) {
		return 0, 0, false
	}
	return secs, int64(math.Round(ops)), true
}

// cacheFigures adds, where the run kept --statistics' tickers, its block
// cache misses per op and hit ratio under the names of the servers' cache
// figures (counters' miss/o and hit%), which the IO-bound verdict reads.
// The tickers count the whole db_bench command (compaction's reads too).
func cacheFigures(out *Output, events int64, f map[string]float64) {
	miss, okM := out.Counters["rocksdb.block.cache.miss"]
	hit, okH := out.Counters["rocksdb.block.cache.hit"]
	if !okM || events <= 0 {
		return
	}
	f[counters.FigureMissPerOp] = float64(miss) / float64(events)
	if okH && hit+miss > 0 {
		f[counters.FigureHitPct] = 100 * float64(hit) / float64(hit+miss)
	}
}
