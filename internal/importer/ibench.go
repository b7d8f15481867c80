package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/input"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/version"
	"github.com/qpslab/qpslab/internal/workload/ibench"
)

// An Insert Benchmark run of the reference harness (mytools bench/ibench)
// is a folder in which iq.sh ran np.sh once per step and moved what it
// wrote into a folder named for the step:
//
//	l.i0  l.x  l.i1  l.i2       the load steps
//	qr<R>.L<k>  qp<R>.L<k>      the k-th read+write step: inserts at R rows/s per client
//	                            beside range (qr) or point (qp) queries
//
// In each step's folder, for a run with N clients (the dop):
//
//	o.res.dop<N>     np.sh's summary: its first line
//	                 "P processes, R rows-per-process, T seconds, IPS rows-per-second,
//	                 IPU rows-per-second-per-user, Q queries, QPS queries-per-second, D deletes",
//	                 then ios.sh's iostat and vmstat averages normalised by the insert
//	                 rate and by the query rate, dbGB and dbdirGB, and what is not read
//	                 here (maxima, histograms, percentiles, CPU seconds)
//	o.ib.dop<N>.<n>  client n's output: np.sh's iibench.py command line, then
//	                 iibench.py's 17-field lines, one a second (i_sec t_sec i_ips t_ips
//	                 i_dps t_dps i_qps t_qps max_i max_d max_q t_ins t_del t_query
//	                 retry_i retry_d retry_q), then its histograms and totals
//
// Everything else (o.vm, o.io, o.ctime, o.myvac, the folder "end", …) is
// not read.
var (
	ibStepRe   = regexp.MustCompile(`^(?:(l\.i0|l\.x|l\.i1|l\.i2)|(q[rp])(\d+)(?:\.L(\d+))?)$`)
	ibResRe    = regexp.MustCompile(`^o\.res\.dop(\d+)$`)
	ibClientRe = regexp.MustCompile(`^o\.ib\.dop(\d+)\.(\d+)$`)
)

// ibLoadSteps are the load steps in iq.sh's order.
var ibLoadSteps = []string{"l.i0", "l.x", "l.i1", "l.i2"}

// ibStep is one step's folder.
type ibStep struct {
	test string // l.i0, qr100
	dir  string // its folder's name: l.i0, qr100.L1
	loop int    // k of .L<k>
	rate int    // R of qrR, qpR
}

// ibenchSteps lists the step folders of dir in run order: the load steps,
// then the read+write steps by their .L<k>.
func ibenchSteps(d *input.Dir) ([]ibStep, error) {
	entries, err := d.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var steps []ibStep
	for _, e := range entries {
		m := ibStepRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			// A link to a step folder counts where it stays inside.
			fi, err := d.Stat(e.Name())
			if err != nil {
				return nil, errorf("mytools", d.Join(e.Name()), 0, "%v", err)
			}
			if !fi.IsDir() {
				continue
			}
		} else if !e.IsDir() {
			continue
		}
		s := ibStep{test: m[1], dir: e.Name()}
		if s.test == "" {
			s.test = m[2] + m[3]
			if s.rate, err = positive(m[3]); err != nil {
				return nil, errorf("mytools", d.Join(e.Name()), 0, "the rate of a read+write step: %v", err)
			}
			s.loop, _ = strconv.Atoi(m[4])
		}
		steps = append(steps, s)
	}
	rank := func(s ibStep) int {
		if i := indexOfString(ibLoadSteps, s.test); i >= 0 {
			return i - len(ibLoadSteps)
		}
		return s.loop
	}
	sort.SliceStable(steps, func(i, j int) bool {
		if ri, rj := rank(steps[i]), rank(steps[j]); ri != rj {
			return ri < rj
		}
		return steps[i].dir < steps[j].dir
	})
	return steps, nil
}

func indexOfString(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// isIbench says whether dir holds the Insert Benchmark's step folders (a
// step folder whose name is wrong counts: Ibench says what is wrong).
func isIbench(dir *input.Dir) bool {
	steps, err := ibenchSteps(dir)
	var fe *fileError
	return errors.As(err, &fe) || err == nil && len(steps) > 0
}

// Ibench reads an Insert Benchmark run of the reference harness (the
// layout above): one ibench run per step, in run order, as qpslab's own
// ibench suite records them (its test, position and groups), with what the
// reference reports as the headline: IPS for l.i0, l.i1 and l.i2, indexed
// rows/s for l.x, QPS for the read+write steps (o.res's figures, checked
// against its counts); the background insert rate and the insert SLA
// verdict of a read+write step; the per-second lines of all clients as
// samples; ios.sh's averages as the hardware cost; dbGB and dbdirGB.
// Every step's files must be there and agree (np.sh sums its clients'
// query counts; its rates are its counts over its seconds), or nothing is
// imported. It reads regular files under dir only, each within
// ibenchLimits, and stops with ctx's error once ctx ends.
func Ibench(ctx context.Context, dir string, src Source) ([]result.Run, error) {
	d, err := input.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("import mytools: %w", err)
	}
	defer d.Close()
	return ibenchRuns(ctx, d, src)
}

// ibenchRuns is Ibench over the folder d.
func ibenchRuns(ctx context.Context, dir *input.Dir, src Source) ([]result.Run, error) {
	steps, err := ibenchSteps(dir)
	var fe *fileError
	switch {
	case errors.As(err, &fe):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("import mytools: %w", err)
	case len(steps) == 0:
		return nil, fmt.Errorf("import mytools %s: no Insert Benchmark steps: want the folders bench/ibench/iq.sh makes "+
			"(l.i0, l.x, l.i1, l.i2, qr100.L1, qp100.L2, …), each holding np.sh's o.res.dop<N> and o.ib.dop<N>.<n>", dir.Path())
	}
	var data []*ibData
	var rates []int
	for _, s := range steps {
		d, err := readIbStep(ctx, dir, s)
		if err != nil {
			return nil, err
		}
		if len(data) > 0 && d.dop != data[0].dop {
			return nil, errorf("mytools", d.resPath, 0, "dop%d, but %s is dop%d: a folder holds one run of iq.sh, at one client count",
				d.dop, data[0].resFile, data[0].dop)
		}
		data = append(data, d)
		if s.rate > 0 && !containsInt(rates, s.rate) {
			rates = append(rates, s.rate)
		}
	}
	// The suite's own plan for these steps gives each its position in the
	// run order, its groups and its headline, as qpslab's runs have them.
	plan, err := ibench.Options{Clients: data[0].dop, Rates: rates, Pacing: ibench.Reference}.Plan()
	if err != nil {
		return nil, fmt.Errorf("import mytools %s: %w", dir.Path(), err)
	}
	planned := map[string]suite.Step{}
	for _, st := range plan.Steps {
		planned[st.Test] = st
	}
	common := ibCommonParams(data)
	var runs []result.Run
	for _, d := range data {
		run, err := d.run(src, planned[d.step.test], common)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

func containsInt(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// ibCommonParams are what the whole run says of every step, as qpslab's
// ibench runs record them: nr1 (the rows l.i0 loaded), nr2 (l.i1 and l.i2
// together) and the seconds of a read+write step at its rate.
func ibCommonParams(data []*ibData) map[string]string {
	p := map[string]string{}
	var nr2 int64
	n2 := 0
	for _, d := range data {
		rows := int64(d.res.procs) * d.res.rowsPer
		switch d.step.test {
		case "l.i0":
			p["rows"] = strconv.FormatInt(rows, 10)
		case "l.i1", "l.i2":
			nr2 += rows
			n2++
		}
		if d.step.rate > 0 && p["query_secs"] == "" {
			// np.sh's rows for qrR are querysecs·R·dop: R rows/s for querysecs.
			p["query_secs"] = strconv.FormatFloat(float64(d.res.rowsPer)/float64(d.step.rate), 'g', -1, 64)
		}
	}
	if n2 == 2 {
		p["rows2"] = strconv.FormatInt(nr2, 10)
	}
	return p
}

// ibData is what one step's files say.
type ibData struct {
	step    ibStep
	dop     int
	resPath string // dir/qr100.L1/o.res.dop2
	resFile string // qr100.L1/o.res.dop2
	res     ibRes
	clients []ibClient
}

// readIbStep reads a step's o.res.dop<N> and its clients' o.ib.dop<N>.<n>
// and checks that they agree as np.sh made them.
func readIbStep(ctx context.Context, dir *input.Dir, s ibStep) (*ibData, error) {
	sd := dir.Join(s.dir)
	entries, err := dir.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("import mytools: %w", err)
	}
	var dops []int
	for _, e := range entries {
		if m := ibResRe.FindStringSubmatch(e.Name()); m != nil && !e.IsDir() {
			dop, err := positive(m[1])
			if err != nil {
				return nil, errorf("mytools", filepath.Join(sd, e.Name()), 0, "dop%s is not a client count", m[1])
			}
			dops = append(dops, dop)
		}
	}
	switch len(dops) {
	case 0:
		return nil, errorf("mytools", sd, 0, "no o.res.dop<N>: np.sh writes it when the step ends; finish the run or remove the step's folder")
	case 1:
	default:
		sort.Ints(dops)
		return nil, errorf("mytools", sd, 0, "o.res files of dop %s: a step's folder holds one run of np.sh", joinInts(dops))
	}
	d := &ibData{step: s, dop: dops[0]}
	name := fmt.Sprintf("o.res.dop%d", d.dop)
	d.resPath, d.resFile = filepath.Join(sd, name), s.dir+"/"+name
	f, err := dir.Open(ctx, s.dir+"/"+name, ibenchLimits)
	if err != nil {
		return nil, fmt.Errorf("import mytools: %w", err)
	}
	d.res, err = parseIbRes(d.resPath, f)
	f.Close()
	if err != nil {
		return nil, err
	}
	// np.sh starts one client when the only table's indexes are made at
	// the end (l.x with one shared table), else dop of them.
	if d.res.procs != d.dop && d.res.procs != 1 {
		return nil, errorf("mytools", d.resPath, 1, "%d processes, but the file name says dop%d", d.res.procs, d.dop)
	}
	for _, e := range entries {
		if m := ibClientRe.FindStringSubmatch(e.Name()); m != nil && m[1] == strconv.Itoa(d.dop) {
			if n, err := strconv.Atoi(m[2]); err != nil || n < 1 || n > d.res.procs {
				return nil, errorf("mytools", filepath.Join(sd, e.Name()), 0, "no client %s of %d: %s says %d processes", m[2], d.res.procs, name, d.res.procs)
			}
		}
	}
	for n := 1; n <= d.res.procs; n++ {
		rel := fmt.Sprintf("%s/o.ib.dop%d.%d", s.dir, d.dop, n)
		p := dir.Join(rel)
		f, err := dir.Open(ctx, rel, ibenchLimits)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errorf("mytools", d.resPath, 1, "%d processes, but there is no o.ib.dop%d.%d: np.sh writes each client's output there", d.res.procs, d.dop, n)
		}
		if err != nil {
			return nil, fmt.Errorf("import mytools: %w", err)
		}
		c, err := parseIbClient(p, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		if err := c.check(s); err != nil {
			return nil, err
		}
		d.clients = append(d.clients, c)
	}
	return d, d.check()
}

// check holds o.res to the formulas np.sh computed it with: IPS = rows /
// seconds and QPS = queries / seconds, both cut to one decimal by bc
// (scale=1), rows = P · R (R rounded down by its division by P), queries
// the sum of each client's last t_query.
func (d *ibData) check() error {
	r := d.res
	var q int64
	var sum [3]float64 // the clients' rows inserted and deleted and queries, unbounded
	for _, c := range d.clients {
		l := c.last()
		q += l.query
		sum[0], sum[1], sum[2] = sum[0]+float64(l.ins), sum[1]+float64(l.del), sum[2]+float64(l.query)
	}
	if math.Max(sum[0], math.Max(sum[1], sum[2])) > maxFigure*maxFigure {
		return errorf("mytools", d.resPath, 1, "the clients' totals (o.ib.dop%d.*) add up to more than 1e18: fix or remove the files", d.dop)
	}
	if q != r.queries {
		return errorf("mytools", d.resPath, 1, "%d queries, but the last per-second lines of o.ib.dop%d.* add up to %d: np.sh sums them", r.queries, d.dop, q)
	}
	rows := int64(r.procs) * r.rowsPer
	secs := float64(r.secs)
	lo, hi := bcDiv(float64(rows), secs), bcDiv(float64(rows+int64(r.procs)-1), secs)
	if r.ips < lo-1e-9 || r.ips > hi+1e-9 {
		return errorf("mytools", d.resPath, 1, "%s rows-per-second, but %d processes × %d rows in %d seconds are %s: np.sh divides its rows by its seconds",
			r.ipsText, r.procs, r.rowsPer, r.secs, strconv.FormatFloat(lo, 'f', 1, 64))
	}
	if want := bcDiv(float64(r.queries), secs); math.Abs(r.qps-want) > 1e-9 {
		return errorf("mytools", d.resPath, 1, "%s queries-per-second, but %d queries in %d seconds are %s: np.sh divides its queries by its seconds",
			r.qpsText, r.queries, r.secs, strconv.FormatFloat(want, 'f', 1, 64))
	}
	return nil
}

// bcDiv is bc's `scale=1; a / b`: the quotient cut (not rounded) to one
// decimal.
func bcDiv(a, b float64) float64 { return math.Floor(a/b*10+1e-9) / 10 }

// ibRes is what is read of an o.res.dop<N> file.
type ibRes struct {
	procs            int
	rowsPer, secs    int64
	queries          int64
	ips, ipu, qps    float64
	ipsText, qpsText string
	deletes          string
	blocks           map[string]*ibBlock // "insert.io", "insert.vm", "query.io", "query.vm"
	dbGB, dbdirGB    float64
	hasDB, hasDir    bool
}

// ibBlock is one of ios.sh's value lines: its figures by header, or why
// it could not be read (which matters only where the block is used), or
// none (empty: awk divided by zero and printed nothing).
type ibBlock struct {
	vals  map[string]float64
	err   error
	empty bool
}

// The first line's figures and their units, in np.sh's order; "deletes"
// (np.sh since --delete_per_insert) may be missing.
var ibResUnits = []string{"processes", "rows-per-process", "seconds", "rows-per-second", "rows-per-second-per-user",
	"queries", "queries-per-second", "deletes"}

// ios.sh's headers: iostat and vmstat averages normalised by the insert
// rate (/i) and by the query rate (/q; vmstat's cs/q and cpu/q are per
// insert in the insert block).
var (
	ibIOInsert = []string{"nsamp", "r/s", "rMB/s", "w/s", "wMB/s", "r/i", "rKB/i", "w/i", "wKB/i", "ips"}
	ibIOQuery  = []string{"nsamp", "r/s", "rMB/s", "w/s", "wMB/s", "r/q", "rKB/q", "w/q", "wKB/q", "qps"}
	ibVM       = []string{"nsamp", "cs/s", "cpu/s", "cs/q", "cpu/q"}
)

// parseIbRes reads an o.res.dop<N> file from r.
func parseIbRes(path string, r io.Reader) (ibRes, error) {
	res := ibRes{blocks: map[string]*ibBlock{}}
	sc := input.NewScanner(r, ibenchLimits.Line)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return ibRes{}, errorf("mytools", path, 1, "%v", err)
		}
		return ibRes{}, errorf("mytools", path, 1, "empty: np.sh writes \"P processes, R rows-per-process, T seconds, …\" first")
	}
	if err := res.first(sc.Text()); err != nil {
		return ibRes{}, errorf("mytools", path, 1, "%v", err)
	}
	n := 1
	section := ""     // "insert" or "query": the ios.sh block being read
	var want []string // the header just read, whose values come next
	var into *ibBlock // where they go
	for sc.Scan() {
		n++
		line := sc.Text()
		fields := strings.Fields(line)
		if want != nil {
			if len(fields) > 0 { // a blank line: awk divided by zero and printed nothing
				into.vals, into.err = ibValues(path, n, want, fields)
				into.empty = false
			}
			want, into = nil, nil
			continue
		}
		switch text := strings.Join(fields, " "); {
		case text == "iostat, vmstat normalized by insert rate":
			section = "insert"
		case text == "iostat, vmstat normalized by query rate":
			section = "query"
		case section == "insert" && text == strings.Join(ibIOInsert, " "), section == "query" && text == strings.Join(ibIOQuery, " "):
			want, into = fields, &ibBlock{empty: true}
			res.blocks[section+".io"] = into
		case section != "" && text == strings.Join(ibVM, " "):
			want, into = fields, &ibBlock{empty: true}
			res.blocks[section+".vm"] = into
		case len(fields) >= 2 && (fields[0] == "dbGB" || fields[0] == "dbdirGB"):
			v, err := number(fields[1])
			if err != nil {
				return ibRes{}, errorf("mytools", path, n, "%s: %v", fields[0], err)
			}
			if fields[0] == "dbGB" {
				res.dbGB, res.hasDB = v, true
			} else {
				res.dbdirGB, res.hasDir = v, true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return ibRes{}, errorf("mytools", path, n+1, "%v", err)
	}
	return res, nil
}

// first reads the first line of o.res.
func (res *ibRes) first(line string) error {
	parts := strings.Split(line, ",")
	format := `want "P processes, R rows-per-process, T seconds, IPS rows-per-second, IPU rows-per-second-per-user, Q queries, QPS queries-per-second, D deletes" as np.sh writes it`
	if len(parts) < len(ibResUnits)-1 || len(parts) > len(ibResUnits) {
		return fmt.Errorf("%d figures: %s", len(parts), format)
	}
	vals := make([]string, len(parts))
	for i, p := range parts {
		f := strings.Fields(p)
		if len(f) != 2 || f[1] != ibResUnits[i] {
			return fmt.Errorf("figure %d is %q: %s", i+1, strings.TrimSpace(p), format)
		}
		vals[i] = f[0]
	}
	var err error
	fail := func(i int, e error) error { return fmt.Errorf("%s: %v", ibResUnits[i], e) }
	if res.procs, err = positive(vals[0]); err != nil {
		return fail(0, err)
	}
	if res.rowsPer, err = count(vals[1]); err != nil {
		return fail(1, err)
	}
	if res.secs, err = count(vals[2]); err != nil {
		return fail(2, err)
	}
	if res.secs < 1 || res.secs > maxFigure {
		return fail(2, figureError(vals[2], "is out of range (np.sh counts 1 second at least)"))
	}
	for i, dst := range []*float64{&res.ips, &res.ipu} {
		if *dst, err = number(vals[3+i]); err != nil {
			return fail(3+i, err)
		}
	}
	if res.queries, err = count(vals[5]); err != nil {
		return fail(5, err)
	}
	if res.qps, err = number(vals[6]); err != nil {
		return fail(6, err)
	}
	if float64(res.rowsPer)*float64(res.procs) > maxFigure*maxFigure {
		return fail(1, figureError(vals[1], "is out of range (above 1e18 rows in all)"))
	}
	if float64(res.queries) > maxFigure*maxFigure {
		return fail(5, figureError(vals[5], "is out of range (above 1e18)"))
	}
	res.ipsText, res.qpsText = vals[3], vals[6]
	if len(vals) == len(ibResUnits) {
		res.deletes = vals[7]
	}
	return nil
}

// ibValues reads the values line under an ios.sh header.
func ibValues(path string, n int, header, fields []string) (map[string]float64, error) {
	if len(fields) != len(header) {
		return nil, errorf("mytools", path, n, "want %d values under the %q header, got %q", len(header), strings.Join(header, " "), strings.Join(fields, " "))
	}
	vals := map[string]float64{}
	for i, h := range header {
		v, err := number(fields[i])
		if err != nil {
			return nil, errorf("mytools", path, n, "%s: %v", h, err)
		}
		vals[h] = v
	}
	return vals, nil
}

// hw is ios.sh's block of one section ("insert" for the load steps,
// "query" for the read+write steps) as the hardware cost per op: nil when
// the block is not there or has no values (ios.sh's awk divides by zero
// when iostat had no sample), an error when it holds what is no figure.
func (res ibRes) hw(section, op string, secs float64) (*result.HW, error) {
	io, vm := res.blocks[section+".io"], res.blocks[section+".vm"]
	if io == nil || vm == nil {
		return nil, nil
	}
	for _, b := range []*ibBlock{io, vm} {
		if b.empty {
			return nil, nil
		}
		if b.err != nil {
			return nil, b.err
		}
	}
	per, rate := "i", io.vals["ips"]
	if section == "query" {
		per, rate = "q", io.vals["qps"]
	}
	return &result.HW{
		Op:           op,
		Seconds:      secs,
		Samples:      int(io.vals["nsamp"]), // iostat's 5-second samples ios.sh averaged
		CPUPerOp:     vm.vals["cpu/q"],
		CSPerOp:      vm.vals["cs/q"],
		ReadsPerOp:   io.vals["r/"+per],
		ReadKBPerOp:  io.vals["rKB/"+per],
		WriteKBPerOp: io.vals["wKB/"+per],
		OpsPerSec:    rate,
		Avg: result.HWSecond{
			Reads:   io.vals["r/s"],
			ReadKB:  io.vals["rMB/s"] * 1024,
			Writes:  io.vals["w/s"],
			WriteKB: io.vals["wMB/s"] * 1024,
			CS:      vm.vals["cs/s"],
		},
		NoCPUTime: true, // ios.sh computes cpu/q, not CPU time per op
		Notes:     []string{"imported from the reference's o.res: iostat/vmstat averages as ios.sh normalised them by the " + section + " rate"},
	}, nil
}

// ibClient is one client's o.ib.dop<N>.<n>: np.sh's command line and
// iibench.py's per-second lines.
type ibClient struct {
	file string
	args map[string]string // --name=value (a flag without a value: "")
	secs []ibSecond
}

// ibSecond is one per-second line: its interval and the client's
// cumulative counts at its end (t_ins and t_del count rows, t_query
// queries), and the interval's longest response times in µs.
type ibSecond struct {
	iSec, tSec             float64
	ins, del, query        int64
	maxI, maxD, maxQ       int64
	retryI, retryD, retryQ int64
}

func (c ibClient) last() ibSecond { return c.secs[len(c.secs)-1] }

// ibHeader is iibench.py's header of its per-second lines.
var ibHeader = []string{"i_sec", "t_sec", "i_ips", "t_ips", "i_dps", "t_dps", "i_qps", "t_qps", "max_i", "max_d", "max_q",
	"t_ins", "t_del", "t_query", "retry_i", "retry_d", "retry_q"}

// parseIbClient reads a client's o.ib.dop<N>.<n> from r. As np.sh does, a
// per-second line is one of 17 fields (awk's NF == 17) that is not the
// header; other lines (histograms, totals) are passed over.
func parseIbClient(path string, r io.Reader) (ibClient, error) {
	c := ibClient{file: path, args: map[string]string{}}
	sc := input.NewScanner(r, ibenchLimits.Line)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		fields := strings.Fields(line)
		if n == 1 {
			if len(fields) < 2 || !strings.HasSuffix(fields[1], "iibench.py") {
				return ibClient{}, errorf("mytools", path, 1, "not an iibench.py command line: np.sh writes the client's command line first")
			}
			for _, f := range fields[2:] {
				if k, ok := strings.CutPrefix(f, "--"); ok {
					name, val, _ := strings.Cut(k, "=")
					c.args[name] = val
				}
			}
			continue
		}
		if len(fields) != len(ibHeader) || fields[0] == ibHeader[0] {
			continue
		}
		if _, err := strconv.ParseFloat(fields[0], 64); err != nil {
			continue // no per-second line
		}
		s, err := ibParseSecond(fields)
		if err != nil {
			return ibClient{}, errorf("mytools", path, n, "%v", err)
		}
		if len(c.secs) > 0 {
			p := c.last()
			for _, x := range []struct {
				name      string
				now, prev int64
			}{{"t_ins", s.ins, p.ins}, {"t_del", s.del, p.del}, {"t_query", s.query, p.query},
				{"retry_i", s.retryI, p.retryI}, {"retry_d", s.retryD, p.retryD}, {"retry_q", s.retryQ, p.retryQ}} {
				if x.now < x.prev {
					return ibClient{}, errorf("mytools", path, n, "%s %d is below the line before's %d: iibench.py's totals only grow", x.name, x.now, x.prev)
				}
			}
		}
		c.secs = append(c.secs, s)
	}
	if err := sc.Err(); err != nil {
		return ibClient{}, errorf("mytools", path, n+1, "%v", err)
	}
	if n == 0 {
		return ibClient{}, errorf("mytools", path, 1, "empty: np.sh writes the client's command line, then its per-second lines")
	}
	if len(c.secs) == 0 {
		return ibClient{}, errorf("mytools", path, 0, "no per-second lines (%d fields, as iibench.py prints them with --secs_per_report=1)", len(ibHeader))
	}
	return c, nil
}

// ibParseSecond reads the fields of a per-second line.
func ibParseSecond(f []string) (ibSecond, error) {
	for i := 0; i < 8; i++ {
		if _, err := number(f[i]); err != nil {
			return ibSecond{}, fmt.Errorf("%s: %v", ibHeader[i], err)
		}
	}
	var s ibSecond
	s.iSec, _ = number(f[0])
	s.tSec, _ = number(f[1])
	if s.iSec <= 0 {
		return ibSecond{}, fmt.Errorf("i_sec: %v", figureError(f[0], "is no interval"))
	}
	for i, dst := range []*int64{&s.maxI, &s.maxD, &s.maxQ, &s.ins, &s.del, &s.query, &s.retryI, &s.retryD, &s.retryQ} {
		v, err := count(f[8+i])
		if err != nil {
			return ibSecond{}, fmt.Errorf("%s: %v", ibHeader[8+i], err)
		}
		if float64(v) > maxFigure*maxFigure {
			return ibSecond{}, fmt.Errorf("%s: %v", ibHeader[8+i], figureError(f[8+i], "is out of range (above 1e18)"))
		}
		*dst = v
	}
	return s, nil
}

// rpc is the rows of one INSERT (and one DELETE) of the client: its
// --rows_per_commit, lowered to --inserts_per_second as iibench.py does.
func (c ibClient) rpc() (int64, error) {
	v, ok := c.args["rows_per_commit"]
	if !ok {
		return 0, errorf("mytools", c.file, 1, "no --rows_per_commit on the command line: np.sh always passes it")
	}
	rpc, err := positive(v)
	if err != nil {
		return 0, errorf("mytools", c.file, 1, "--rows_per_commit: %v", err)
	}
	if ips, err := strconv.Atoi(c.args["inserts_per_second"]); err == nil && ips > 0 && rpc > ips {
		rpc = ips
	}
	return int64(rpc), nil
}

// check holds a client's command line to its step's folder: a read+write
// step inserts at its rate and runs point queries for qp, range queries for
// qr.
func (c ibClient) check(s ibStep) error {
	if _, err := c.rpc(); err != nil {
		return err
	}
	if s.rate == 0 {
		return nil
	}
	if v := c.args["inserts_per_second"]; v != strconv.Itoa(s.rate) {
		return errorf("mytools", c.file, 1, "--inserts_per_second=%s, but the folder %s is a step at %d rows/s", v, s.dir, s.rate)
	}
	if _, point := c.args["query_pk_only"]; point != strings.HasPrefix(s.test, "qp") {
		kind := map[bool]string{true: "point queries (--query_pk_only)", false: "range queries"}[point]
		return errorf("mytools", c.file, 1, "the client ran %s, but the folder is %s", kind, s.dir)
	}
	return nil
}

// startGap is how long np.sh waits before starting the next client:
// 10 s after the first when the clients create their tables (--setup),
// else 1 s.
func startGap(first ibClient, n int) int {
	if _, setup := first.args["setup"]; setup && n == 1 {
		return 10
	}
	return 1
}

// run makes the step's run.
func (d *ibData) run(src Source, st suite.Step, common map[string]string) (result.Run, error) {
	first := d.clients[0]
	src, _ = src.Resolve() // the build's flavor and version, as newRun's
	run := result.Run{
		SchemaVersion: result.SchemaVersion,
		QpslabVersion: version.Version, // the importing qpslab; Params["source"] says where the numbers came from
		Suite:         ibench.Name,
		Test:          d.step.test,
		Step:          st.Order,
		Role:          st.Role,
		Groups:        st.Groups,
		Build:         src.Build,
		Flavor:        src.Flavor,
		Version:       src.Version,
		Config:        src.Config,
		Threads:       d.dop,
		Started:       src.Time, // the time given, if any: np.sh keeps no wall-clock times
		Loop:          "closed",
		Status:        result.OK,
		Params: map[string]string{
			"source": "mytools", "file": d.resFile,
			// The conditions as qpslab's ibench runs record them
			// (result.Run.Conditions); the client was iibench.py.
			"transport": "iibench", "pacing": string(ibench.Reference),
			"clients": strconv.Itoa(d.dop), "processes": strconv.Itoa(d.res.procs),
		},
	}
	if src.Commit != "" {
		run.Params["commit"] = src.Commit
	}
	if src.StorageEngine != "" {
		run.Params["engine"] = src.StorageEngine
	}
	for k, v := range common {
		run.Params[k] = v
	}
	for k, v := range st.Params {
		run.Params[k] = v
	}
	tables := map[string]bool{}
	for _, c := range d.clients {
		tables[c.args["table_name"]] = true
	}
	run.Params["tables"] = strconv.Itoa(len(tables))
	_, del := first.args["delete_per_insert"]
	run.Params["delete_per_insert"] = strconv.FormatBool(del)
	_, prep := first.args["use_prepared_query"]
	run.Params["prepared"] = strconv.FormatBool(prep)
	rpc, _ := first.rpc()
	run.Params["rows_per_commit"] = strconv.FormatInt(rpc, 10)
	if v := first.args["dbms"]; v != "" {
		run.Params["dbms"] = v
		if v == "postgres" {
			run.Flavor = "postgres" // iibench.py's mysql serves MySQL and MariaDB alike
		} else if e := first.args["engine"]; e != "" {
			run.Params["engine"] = e
		}
	}
	if d.res.deletes != "" {
		run.Params["deletes"] = d.res.deletes
	}

	// Samples: each client's seconds, placed after np.sh's start gaps,
	// added up second by second.
	bySec := map[int]*ibSample{}
	span := 0
	offset := 0
	tot := ibTotals{}
	for i, c := range d.clients {
		if i > 0 {
			offset += startGap(first, i)
		}
		rpc, _ := c.rpc()
		var prev ibSecond
		for k, s := range c.secs {
			sec := offset + k
			smp := bySec[sec]
			if smp == nil {
				smp = &ibSample{}
				bySec[sec] = smp
			}
			smp.add(s, prev, rpc)
			prev = s
			span = max(span, sec+1)
		}
		tot.add(c.last(), rpc)
	}
	secs := make([]int, 0, len(bySec))
	for s := range bySec {
		secs = append(secs, s)
	}
	sort.Ints(secs)
	for _, s := range secs {
		run.Samples = append(run.Samples, bySec[s].sample(s))
		for i, k := range bySec[s].kinds {
			tot.kinds[i].max = max(tot.kinds[i].max, k.max)
		}
	}

	// Totals: o.res's counts and seconds, the clients' statements.
	t := &run.Totals
	t.Seconds = float64(d.res.secs)
	t.Rows = int64(d.res.procs) * d.res.rowsPer
	t.RowsPerSec = float64(t.Rows) / t.Seconds
	t.Retries = tot.retries
	t.Ops = tot.ops(t.Seconds)
	for _, o := range t.Ops {
		t.Events += o.Count
		t.Response.Max = math.Max(t.Response.Max, o.Response.Max)
	}
	t.Statements = t.Events
	t.Service = t.Response
	t.TPS, t.QPS = float64(t.Events)/t.Seconds, float64(t.Statements)/t.Seconds
	op := st.Headline.Of(t)
	// The headline is the reference's own figure, as o.res prints it (its
	// counts over its seconds, cut to one decimal; checked above).
	t.Reported = d.res.ips
	if d.step.rate > 0 {
		t.Reported = d.res.qps
	}
	t.Figures = map[string]float64{ibench.FigureIPS: t.RowsPerSec}
	// The reference's per-second rate percentiles are over the seconds its
	// clients reported.
	for k, v := range ibench.RatePercentiles(run.Samples, float64(span)) {
		t.Figures[k] = v
	}
	if d.step.rate > 0 {
		v, share := ibench.SLA(float64(d.step.rate*d.dop), *t, run.Samples)
		run.Verdicts = append(run.Verdicts, v)
		t.Figures[ibench.FigureSLA] = share
	}
	if d.res.hasDB {
		t.Figures[ibench.FigureDBMB] = d.res.dbGB * 1024
	}
	if d.res.hasDir {
		t.Figures[ibench.FigureDatadirMB] = d.res.dbdirGB * 1024
	}
	section := "insert"
	if d.step.rate > 0 {
		section = "query"
	}
	hw, err := d.res.hw(section, op, t.Seconds)
	if err != nil {
		return result.Run{}, err
	}
	if hw != nil {
		run.HW = hw
		run.Params["met_file"] = d.resFile
	}
	return run, nil
}

// ibKinds are the operation kinds of an ibench run, in report order.
var ibKinds = []string{ibench.KindInsert, ibench.KindDelete, ibench.KindQuery}

// ibCount is one kind's statements and longest response time (µs).
type ibCount struct {
	n   int64
	max int64
}

// ibSample adds up the clients' lines of one second.
type ibSample struct {
	rows, retries int64
	kinds         [3]ibCount
}

// ceilDiv is a/b rounded up: the statements that wrote a rows (the last
// may be short).
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func (m *ibSample) add(s, prev ibSecond, rpc int64) {
	m.rows += s.ins - prev.ins
	m.retries += s.retryI - prev.retryI + s.retryD - prev.retryD + s.retryQ - prev.retryQ
	for i, x := range []struct{ n, max int64 }{
		{ceilDiv(s.ins-prev.ins, rpc), s.maxI}, {ceilDiv(s.del-prev.del, rpc), s.maxD}, {s.query - prev.query, s.maxQ},
	} {
		m.kinds[i].n += x.n
		m.kinds[i].max = max(m.kinds[i].max, x.max)
	}
}

func (m *ibSample) sample(sec int) result.Sample {
	s := result.Sample{Second: sec, Rows: m.rows, Retries: m.retries}
	for i, k := range m.kinds {
		if k.n == 0 && k.max == 0 {
			continue
		}
		lat := result.Latency{Max: float64(k.max)} // only the max is known: Count 0 leaves the percentiles unknown
		s.Ops = append(s.Ops, result.OpSample{Kind: ibKinds[i], Count: k.n, Response: lat, Service: lat})
		s.Events += k.n
		s.Response.Max = math.Max(s.Response.Max, float64(k.max))
	}
	s.Statements = s.Events
	s.Service = s.Response
	return s
}

// ibTotals adds up the clients' last lines.
type ibTotals struct {
	retries int64
	kinds   [3]ibCount
}

func (t *ibTotals) add(last ibSecond, rpc int64) {
	t.retries += last.retryI + last.retryD + last.retryQ
	for i, n := range []int64{ceilDiv(last.ins, rpc), ceilDiv(last.del, rpc), last.query} {
		t.kinds[i].n += n
	}
}

// ops are the totals per kind, with each kind's longest response time of
// any second.
func (t *ibTotals) ops(secs float64) []result.OpTotals {
	var out []result.OpTotals
	for i, k := range t.kinds {
		if k.n == 0 {
			continue
		}
		lat := result.Latency{Max: float64(k.max)} // only the max is known: Count 0 leaves the percentiles unknown
		out = append(out, result.OpTotals{OpSample: result.OpSample{Kind: ibKinds[i], Count: k.n, Response: lat, Service: lat}, Rate: float64(k.n) / secs})
	}
	return out
}
