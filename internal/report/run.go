package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/table"
)

// IsTTY says whether w is a terminal (colour, progress bars).
func IsTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func ms(l result.Latency) string {
	if l.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3g/%.3g/%.3g/%.3g/%.3g", l.P50/1000, l.P95/1000, l.P99/1000, l.P999/1000, l.Max/1000)
}

// headline is a run's reported figure with its unit when it is not QPS.
func headline(r result.Run) string {
	if r.Totals.Reported == 0 && r.Status != result.OK {
		return "-"
	}
	s := fmt.Sprintf("%.1f", r.Totals.Reported)
	if u := r.Totals.ReportedUnit; u != "" && u != "qps" {
		s += " " + u
	}
	return s
}

// RunHeader is the header of the per-run lines (verbose output).
func RunHeader(w io.Writer) {
	fmt.Fprintf(w, "%-18s %-34s %4s %12s %10s %11s  %-36s %-36s %6s\n",
		"BUILD", "TEST", "THR", "QPS", "TPS", "ROWS/S", "RESPONSE ms p50/p95/p99/p99.9/max", "SERVICE ms p50/p95/p99/p99.9/max", "ERRORS")
	fmt.Fprintf(w, "  (each test's second line: hardware cost per op of the measured window; CPU µs/op host-wide, server process tree, client)\n")
}

// RunLine writes one run as it ended: its figures, the per-kind figures,
// its verdicts and its hardware cost per op (verbose output).
func RunLine(w io.Writer, r result.Run) {
	t := r.Totals
	svc := "(same: closed loop)"
	if r.Loop == "open" {
		svc = ms(t.Service)
	}
	if r.Role == result.RoleLoad {
		svc = ""
	}
	line := fmt.Sprintf("%-18s %-34s %4d %12s %10.1f %11.0f  %-36s %-36s %6d", r.Build, r.Test, r.Threads, headline(r), t.TPS, t.RowsPerSec, ms(t.Response), svc, t.Errors)
	if r.Status != result.OK {
		line += "  " + r.Status
		if r.Error != "" {
			line += ": " + r.Error
		}
	}
	fmt.Fprintln(w, line)
	for _, o := range t.Ops {
		fmt.Fprintf(w, "    %s: %d at %.1f/s, response ms %s, %d errors\n", o.Kind, o.Count, o.Rate, ms(o.Response), o.Errors)
	}
	asked := false
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "    %s: %s (%s)\n", v.Name, map[bool]string{true: "met", false: "MISSED"}[v.OK], v.Detail)
		asked = asked || v.Name == counters.VerdictIOBound
	}
	if r.HW != nil {
		fmt.Fprintln(w, HWLine(r))
	}
	for _, p := range r.Parts {
		fmt.Fprintln(w, PartLine(r, p))
	}
	if v, ok := counters.IOBound(r); ok && !asked {
		fmt.Fprintf(w, "    io: %s (%s)\n", map[bool]string{true: "IO-bound", false: "not IO-bound"}[v.OK], v.Detail)
	}
}

// PartLine is one client host's share of a run whose load came from
// several hosts: its threads, events, its own rate and p99, and its
// client's CPU, so that a host that could not keep up shows.
func PartLine(r result.Run, p result.Part) string {
	cpu := "client CPU not measured"
	if !p.NoClientCPU {
		cpu = fmt.Sprintf("client_cpu_us/o %.1f, client CPU %.0f%% of one", p.ClientCPUUsOp, p.ClientCPU)
	}
	line := fmt.Sprintf("    part %s: %d threads, %d events, %.1f %s, p99 %.3f ms, %s", p.Host, p.Threads, p.Events, p.Reported,
		r.Totals.ReportedUnit, p.P99/1000, cpu)
	if p.Status != result.OK {
		line += ", " + p.Status
		if p.Error != "" {
			line += ": " + p.Error
		}
	}
	return line
}

// HWLine is a run's hardware cost in the reference's metric names, from
// the metric registry; "-" for what was not measured.
func HWLine(r result.Run) string {
	hw := r.HW
	if !hw.Measured() {
		return "    hw: " + strings.Join(hw.Notes, "; ")
	}
	var b strings.Builder
	b.WriteString("    hw:")
	for _, m := range result.MetricsOf(result.ClassHW) {
		v, ok := m.Of(r)
		if !ok {
			v = math.NaN()
		}
		fmt.Fprintf(&b, " %s %s", m.Name, m.Format(v))
	}
	fmt.Fprintf(&b, " | per %s:", hw.Op)
	for _, m := range result.MetricsOf(result.ClassCPU) {
		v, ok := m.Of(r)
		if !ok {
			v = math.NaN()
		}
		fmt.Fprintf(&b, " %s %s", m.Name, m.Format(v))
	}
	a := hw.Avg
	if hw.Remote {
		b.WriteString(" | the server's host: not measured (a target); qpslab's host:")
	} else {
		b.WriteString(" |")
	}
	fmt.Fprintf(&b, " us %.0f sy %.0f wa %.0f st %.1f", a.User, a.System, a.IOWait, a.Steal)
	if !hw.NoDisk {
		fmt.Fprintf(&b, " | rareq-sz %.1f %%util %.0f", a.RareqSz, a.Util)
	}
	if !hw.Remote {
		fmt.Fprintf(&b, " | rss %.0f MB", float64(a.ServerRSS)/1024)
	}
	if a.ServerPSS > 0 {
		fmt.Fprintf(&b, " pss %.0f MB", float64(a.ServerPSS)/1024)
	}
	if a.FreqMHz > 0 {
		fmt.Fprintf(&b, " | %.2f GHz (%.2f–%.2f)", a.FreqMHz/1000, hw.FreqMinMHz/1000, hw.FreqMaxMHz/1000)
	}
	return b.String()
}

// Summary writes the table of a run command's results: one line per run,
// with the headline figure, p99, the server's and the client's CPU per op
// and the status.
func Summary(w io.Writer, runs []result.Run) {
	if len(runs) == 0 {
		return
	}
	server, _ := result.MetricNamed("server_cpu_us/o")
	client, _ := result.MetricNamed("client_cpu_us/o")
	p99, _ := result.MetricNamed("p99")
	// The last column is empty: every line ends in its padding, as a run's
	// lines printed as they end line up with it.
	t := table.New("BUILD", "CONFIG", "TEST", "THR", "REPORTED", "UNIT", p99.Name+" ms", server.Name, client.Name, "ERRORS", "STATUS", "")
	for _, r := range runs {
		unit := r.Totals.ReportedUnit
		val := "-"
		if r.Status == result.OK || r.Totals.Reported > 0 {
			val = fmt.Sprintf("%.1f", r.Totals.Reported)
		}
		lat, cpu, ccpu := "-", "-", "-"
		if v, ok := p99.Of(r); ok {
			lat = p99.Format(v)
		}
		if v, ok := server.Of(r); ok {
			cpu = server.Format(v)
		}
		if v, ok := client.Of(r); ok {
			ccpu = client.Format(v)
		}
		status := r.Status
		switch {
		case r.Status != result.OK && r.Error != "":
			status += ": " + shorten(r.Error, 60)
		case r.Status == result.Saturated:
			for _, v := range r.Verdicts {
				if !v.OK {
					status += ": " + shorten(v.Detail, 60)
				}
			}
		default:
			for _, v := range r.Verdicts {
				if !v.OK { // a goal missed by a run that still measured what it did (an SLA)
					status += " ! missed its " + v.Name + ": " + shorten(v.Detail, 60)
					val += missedMark
				}
			}
		}
		t.Add(r.Build, strings.TrimPrefix(r.Label(), r.Build+"."), r.Test, strconv.Itoa(r.Threads), val, unit, lat, cpu, ccpu,
			strconv.FormatInt(int64(r.Totals.Errors), 10), status, "")
	}
	Doc{Blocks: []Block{{Table: t}}}.Write(w, "text", false)
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// HostWarnings sums up the runs' risk flags (steal, frequency drift) once:
// how many runs each flag hit, and the worst second of each. No lines when
// no run was flagged.
func HostWarnings(runs []result.Run) []string {
	type worst struct {
		runs   int
		detail string
		value  float64
		where  string
	}
	flags := map[string]*worst{}
	for _, r := range runs {
		if r.HW == nil {
			continue
		}
		for _, f := range r.HW.Flags {
			wst := flags[f.Name]
			if wst == nil {
				wst = &worst{value: -1}
				flags[f.Name] = wst
			}
			wst.runs++
			// The worst second: the highest steal, or the widest frequency swing.
			v, sec := worstSecond(f.Name, r.HW)
			if v > wst.value {
				wst.value, wst.detail = v, f.Detail
				wst.where = fmt.Sprintf("%s at %d thread(s) on %s, second %d", r.Test, r.Threads, r.Build, sec)
			}
		}
	}
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		wst := flags[n]
		line := fmt.Sprintf("host warning: %s in %d of %d run(s); worst: %s (%s)", n, wst.runs, len(runs), wst.where, wst.detail)
		if n == "steal" && wst.value >= 0 {
			line = fmt.Sprintf("host warning: steal in %d of %d run(s); worst second %.1f%% steal, %s (%s)", wst.runs, len(runs), wst.value, wst.where, wst.detail)
		}
		out = append(out, line)
	}
	return out
}

// worstSecond is the flag's worst per-second value in hw and its second.
func worstSecond(flag string, hw *result.HW) (float64, int) {
	best, at := -1.0, 0
	for i, s := range hw.Series {
		v := s.Steal
		if flag != "steal" {
			v = s.FreqMHz
		}
		if v > best {
			best, at = v, i
		}
	}
	if flag != "steal" {
		return hw.FreqMaxMHz - hw.FreqMinMHz, at
	}
	return best, at
}

// Progress shows how far a plan is: one bar on a terminal (runs done of
// total, the current test, the ETA), or a line per run elsewhere. It
// counts runs as they start and end, not by their place in the plan: the
// labels of a round run in a counterbalanced order (B before A every
// other round), so places would come out of order.
type Progress struct {
	w             io.Writer
	total         int
	started, done int
	bar           *progressbar.ProgressBar
	t0            time.Time
	sub           string
}

// NewProgress shows progress over total runs on w.
func NewProgress(w io.Writer, total int) *Progress {
	p := &Progress{w: w, total: total, t0: time.Now()}
	if IsTTY(w) {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionSetElapsedTime(true), progressbar.OptionSetWidth(24),
			progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	return p
}

// Start says a run begins (its place in the plan, i from 0, is not what
// is shown: Progress).
func (p *Progress) Start(i int, what string) {
	p.sub = what
	p.started++
	if p.bar != nil {
		p.bar.Describe(what)
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s\n", p.started, p.total, what)
}

// Grow makes the total n runs where that is more than it was
// (--until-decided's looks add runs).
func (p *Progress) Grow(n int) {
	if n <= p.total {
		return
	}
	p.total = n
	if p.bar != nil {
		p.bar.ChangeMax(n)
	}
}

// Step says a task inside a run has done done of total (a load's rows).
func (p *Progress) Step(done, total int64) {
	if p.bar == nil || total <= 0 {
		return
	}
	p.bar.Describe(fmt.Sprintf("%s (%d%%)", p.sub, done*100/total))
}

// Done says a run ended.
func (p *Progress) Done(i int) {
	p.done++
	if p.bar != nil {
		p.bar.Set(p.done)
	}
}

// Finish removes the bar.
func (p *Progress) Finish() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar.Clear()
	}
}
