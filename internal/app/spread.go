package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/metrics"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/recorder"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/target"
)

// DefaultStartWithin is how long the agents of a spread run have to claim
// their parts, from its submission.
const DefaultStartWithin = 5 * time.Minute

// spreadLead is how long after the last part is ready for an item every
// part starts it: time for each to hear that the others are.
const spreadLead = time.Second

// submitSpread queues a spread run (fleet submit --load-hosts K): the plan
// on one target, its load from K of the hosts --hosts names at once, one
// job per host, tried once each.
func submitSpread(ctx context.Context, e Env, s suite.Suite, given map[string]string, o SubmitOptions) error {
	if o.LoadHosts < 2 {
		return fmt.Errorf("--load-hosts %d: give 2 or more (one host is a plain fleet job)", o.LoadHosts)
	}
	v, p, err := submitted(s, given, []refusal{
		{"sandbox", "runs on a server started on this machine: a spread run's load goes to a --target"},
		{"build", "starts a server per host: a spread run's load goes to one --target"},
		{"grid", "starts a server per config: a spread run's load goes to one --target"},
	})
	if err != nil {
		return err
	}
	if p.UntilDecided {
		return fmt.Errorf("--until-decided adds repeats as each host's results say, and a spread run's parts must run the same repeats: give --repeat N")
	}
	if len(p.Targets) != 1 {
		return fmt.Errorf("--load-hosts spreads the load on one server: name it with --target (qpslab targets add registers it here)")
	}
	t, err := target.Get(e.Home, p.Targets[0])
	if err != nil {
		return err
	}
	def, err := json.Marshal(t) // where it listens and where its password is read from: never the password
	if err != nil {
		return err
	}
	p.Share = &plan.Share{Part: 0, Parts: o.LoadHosts}
	p.TargetDefs = map[string]target.Target{t.Name: t}
	if err := p.CheckShare(); err != nil {
		return err
	}
	if o.Attempts > 1 && o.AttemptsGiven {
		return fmt.Errorf("--attempts %d: a part of a spread run is tried once (a retry cannot rejoin the other hosts mid-run): submit it again", o.Attempts)
	}
	within := o.StartWithin
	if within == 0 {
		within = DefaultStartWithin
	}
	if within < time.Second || within > 24*time.Hour {
		return fmt.Errorf("--start-within %s: give from 1s to 24h", within)
	}
	st, fl, err := e.openFleet(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer fl.Close()
	all, err := fl.Resolve(ctx, o.Hosts)
	if err != nil {
		return err
	}
	var hosts []fleet.Host
	for _, h := range all {
		if h.State != fleet.Lost && h.State != fleet.Stopped && len(hosts) < o.LoadHosts && h.Name != t.Agent {
			hosts = append(hosts, h)
		}
	}
	if t.Agent != "" {
		// The agent on the server's host measures it, and loads nothing.
		m, err := fl.Resolve(ctx, []string{t.Agent})
		if err != nil {
			return fmt.Errorf("target %s's --agent: %w", t.Name, err)
		}
		if m[0].State == fleet.Lost || m[0].State == fleet.Stopped {
			return fmt.Errorf("target %s's agent %s is %s: start it on the server's host, or register the target without --agent", t.Name, t.Agent, m[0].State)
		}
	}
	if len(hosts) < o.LoadHosts {
		return fmt.Errorf("--load-hosts %d: --hosts %s names %d host(s) that are up (%s): give more hosts, or fewer load hosts", o.LoadHosts, strings.Join(o.Hosts, ","), len(hosts), strings.Join(fleet.Names(all), ", "))
	}
	files, err := jobFiles(v)
	if err != nil {
		return err
	}
	params := jobParams(given, p)
	// Every part runs the same items: the repeats are fixed here (auto,
	// on one target's pass, is one).
	params["repeat"] = strconv.Itoa(max(p.Design.Repeat, 1))
	spec, err := plan.JobSpec(s, params, files)
	if err != nil {
		return err
	}
	timeout := o.Timeout
	if timeout == 0 {
		var planned time.Duration
		for _, it := range p.Items() {
			planned += it.Seconds
		}
		timeout = within + 2*planned + 30*time.Minute
	}
	clock, err := fl.Clock(ctx)
	if err != nil {
		return err
	}
	b := make([]byte, 4)
	rand.Read(b)
	id := "spread-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b)
	sp := fleet.Spread{ID: id, Parts: o.LoadHosts, StartBy: time.Now().Add(clock.Offset).Add(within), Hosts: fleet.Names(hosts), Target: def,
		Monitor: t.Agent}
	var jobs []fleet.Job
	for i, h := range hosts {
		part := sp
		part.Part = i
		jobs = append(jobs, fleet.Job{Suite: s.Name(), Params: params, Spec: spec, Files: files, Host: h.Name, Timeout: timeout.Seconds(),
			Batch: id, Spread: &part})
	}
	if sp.Monitor != "" {
		part := sp
		part.Part = sp.Parts
		jobs = append(jobs, fleet.Job{Suite: s.Name(), Params: params, Spec: spec, Files: files, Host: sp.Monitor, Timeout: timeout.Seconds(),
			Batch: id, Spread: &part})
	}
	ids, err := fl.SubmitSpread(ctx, jobs)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "spread %s: %s on target %s, its load from %d hosts at once (%s), each to claim its part within %s\n",
		id, s.Name(), t.Name, len(hosts), strings.Join(sp.Hosts, ", "), within)
	for i, h := range hosts {
		fmt.Fprintf(e.Out, "job %d: part %d of %d on %s, timeout %s\n", ids[i], i, len(hosts), h.Name, timeout)
	}
	if sp.Monitor != "" {
		fmt.Fprintf(e.Out, "job %d: the server's host, measured by %s, timeout %s\n", ids[len(ids)-1], sp.Monitor, timeout)
	}
	return nil
}

// runSpread runs one part of a spread run on this agent: it claims the
// part (every part must by the spread's start), runs its share of the
// plan against the target, each measured item starting with the other
// parts', and keeps its runs of them for the merge; part 0 also runs the
// load and the hooks, then merges each item's parts into one run and
// stores them, or none if any part failed.
func (a jobAgent) runSpread(ctx context.Context, at fleet.Attempt) (err error) {
	e, name, agent := a.e, a.name, a.agent
	sp := *at.Job.Spread
	h := e.Home
	st, fl, err := e.openFleet(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer fl.Close()
	defer func() {
		if err != nil {
			fl.Fail(context.WithoutCancel(ctx), sp.ID, fmt.Sprintf("part %d on %s: %v", sp.Part, name, err))
			err = fleet.Permanent(err)
		}
	}()
	p, err := jobPlan(at.Job, nil) // a target: no sandbox, no config
	if err != nil {
		return err
	}
	var t target.Target
	if err := json.Unmarshal(sp.Target, &t); err != nil {
		return fmt.Errorf("the spread's target: %w", err)
	}
	p.TargetDefs = map[string]target.Target{t.Name: t}
	p.ID = sp.ID
	fmt.Fprintf(e.Err, "spread %s: part %d of %d, claiming it\n", sp.ID, sp.Part, sp.Parts)
	if err := fl.Claim(ctx, sp, name); err != nil {
		return err
	}
	if err := p.Resolve(ctx, h); err != nil {
		return err
	}
	if sp.Part == sp.Parts {
		return a.monitorSpread(ctx, fl, sp, p, t)
	}
	p.Share = &plan.Share{Part: sp.Part, Parts: sp.Parts, Ready: func(ctx context.Context, key string) (time.Time, error) {
		return fl.Ready(ctx, sp, key, spreadLead)
	}}
	if err := p.Check(h); err != nil {
		return err
	}
	out := filepath.Join(h.Results(), fmt.Sprintf("fleet-%s-part%d.json", sp.ID, sp.Part))
	if err := home.EnsurePrivate(filepath.Dir(out)); err != nil {
		return err
	}
	meta := store.Meta{Hostname: name, Job: strconv.FormatInt(at.ID, 10), JobAttempt: at.Attempt}
	// A failure elsewhere (another part's error, its host lost) ends this
	// part's plan at once, with the reason.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() {
		if err := fl.Watch(ctx, sp); err != nil {
			stop(err)
		}
	}()
	if _, err := runPlan(ctx, e, p, planRun{out: out, verbose: true, agent: agent, meta: meta,
		part: func(ctx context.Context, r result.Run) error {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			return fl.PutRun(ctx, sp, r.Params[plan.ItemParam], b)
		}}); err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, fleet.ErrSpreadFailed) {
			return cause // why the plan was stopped, not that it was
		}
		return err
	}
	if sp.Part != 0 {
		return nil
	}
	// Part 0 merges every item's parts, all of them before any is stored:
	// nothing half-merged is kept.
	var merged []*result.Run
	for _, key := range p.ShareKeys() {
		raws, err := fl.Runs(ctx, sp, key)
		if err != nil {
			return err
		}
		parts := make([]*result.Run, len(raws))
		for i, b := range raws {
			parts[i] = &result.Run{}
			if err := json.Unmarshal(b, parts[i]); err != nil {
				return fmt.Errorf("part %d's run of %s: %w", i, key, err)
			}
		}
		m, err := engine.MergeConcurrent(parts[:sp.Parts], sp.Hosts)
		if err != nil {
			return err
		}
		if sp.Monitor != "" {
			serverHost(m, parts[sp.Parts].HW, sp.Monitor)
		}
		delete(m.Params, plan.ItemParam)
		m.Plan = sp.ID
		merged = append(merged, m)
	}
	if state, why, err := fl.SpreadState(ctx, sp.ID); err != nil || state != fleet.SpreadRunning {
		if err == nil {
			err = fmt.Errorf("%w: %s", fleet.ErrSpreadFailed, why)
		}
		return err
	}
	sink := &recorder.Sink{Store: st, File: filepath.Join(h.Results(), "fleet-"+sp.ID+".json"), Meta: meta}
	for _, m := range merged {
		r, err := sink.Begin(ctx, *m)
		if err != nil {
			return err
		}
		if err := r.Done(ctx, *m); err != nil {
			return err
		}
	}
	if err := fl.Finish(ctx, sp.ID); err != nil {
		if errors.Is(err, fleet.ErrSpreadFailed) {
			return err
		}
		return fmt.Errorf("spread %s: %w", sp.ID, err)
	}
	fmt.Fprintf(e.Err, "spread %s: %d run(s) merged from %d hosts (%s) and stored\n", sp.ID, len(merged), sp.Parts, strings.Join(sp.Hosts, ", "))
	report.RunHeader(e.Err)
	for _, m := range merged {
		report.RunLine(e.Err, *m) // each host's part beneath: a host that could not keep up shows
	}
	return nil
}

// monitorSpread is the part of a spread run on the target's own host: it
// loads nothing; at each measured item it starts with the load parts and
// samples the server's process and the disk of its folder over the item's
// window (after its warm-up, for its seconds), and keeps that as its run,
// whose hardware part 0 puts in the merged run (serverHost).
func (a jobAgent) monitorSpread(ctx context.Context, fl *fleet.Fleet, sp fleet.Spread, p *plan.Runner, t target.Target) error {
	e := a.e
	pid, dir := target.Local(t)
	if pid == 0 {
		return fmt.Errorf("agent %s is to measure target %s's host, and no process here listens at %s: run the target's --agent on the server's host", sp.Monitor, t.Name, t.Where())
	}
	disks, derr := metrics.DisksOf(host.Real, dir)
	fmt.Fprintf(e.Err, "spread %s: measuring the server (pid %d, in %s) for the %d load host(s)\n", sp.ID, pid, dir, sp.Parts)
	for _, it := range p.Items() {
		st := p.Steps.Steps[it.Step]
		if st.Task != nil {
			continue
		}
		key := plan.ShareKey(st.Test, it.Threads, strconv.Itoa(it.Repeat))
		if _, err := fl.Ready(ctx, sp, key+"/open", spreadLead); err != nil {
			return err
		}
		at, err := fl.Ready(ctx, sp, key, spreadLead)
		if err != nil {
			return err
		}
		smp, err := metrics.NewSampler(metrics.Spec{Roots: host.Real, ServerPID: pid, Disks: disks})
		if err != nil {
			return err
		}
		if err := sleepUntil(ctx, at.Add(p.Warmup)); err != nil {
			return err
		}
		smp.Open()
		err = sleepUntil(ctx, time.Now().Add(st.Seconds))
		smp.Close()
		if err != nil {
			return err
		}
		var notes []string
		if derr != nil {
			notes = append(notes, "no disk metrics: "+derr.Error())
		}
		hw := smp.Result(1, "", nil, notes)
		run := result.Run{Suite: p.Suite.Name(), Test: st.Test, Status: result.OK, HW: hw, Params: map[string]string{plan.ItemParam: key}}
		b, err := json.Marshal(run)
		if err != nil {
			return err
		}
		if err := fl.PutRun(ctx, sp, key, b); err != nil {
			return err
		}
	}
	return nil
}

func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(time.Until(t)):
		return nil
	}
}

// serverHost puts what the agent on the server's host measured over the
// window into the merged run m: the host's and the server's CPU, context
// switches and disk per operation at the run's rate, as a local run has
// them; the client CPU per op stays the load hosts'.
func serverHost(m *result.Run, hw *result.HW, agent string) {
	if !hw.Measured() {
		if m.HW != nil && hw != nil {
			m.HW.Notes = append(m.HW.Notes, "the server's host ("+agent+") measured nothing: "+strings.Join(hw.Notes, "; "))
		}
		return
	}
	out := *hw
	client := math.NaN()
	if m.HW != nil && !m.HW.NoCPUTime {
		client = m.HW.ClientCPUUsOp
		out.Op = m.HW.Op
	}
	metrics.PerOp(&out, m.Totals.Reported)
	out.ClientCPUUsOp, out.NoCPUTime = 0, false
	if !math.IsNaN(client) {
		out.ClientCPUUsOp = client
	}
	out.Remote = false
	out.Notes = append(append([]string(nil), hw.Notes...), fmt.Sprintf("the server's host measured by agent %s; the load from %d client hosts (their client CPU in the run's parts)", agent, len(m.Parts)))
	m.HW = &out
}
