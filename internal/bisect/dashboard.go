package bisect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/serve"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

// "Bisect this" (docs/bisect.md, docs/serve.md): an attention entry of
// qpslab serve whose builds name commits (the runs' commit parameter:
// builds compiled from a git tree), and whose commits a source tree the
// server knows holds (--bisect-src), is bisected by a fleet job
// (fleet.BisectJob: qpslab bisect on an agent, RunJob), queued from the
// entry (its form, or POST /api/v1/attention/{key}/bisect, with the
// triage scope). The bisection is stored as qpslab bisect stores it, with
// the entry's key: the entry shows its progress and answer, /bisections
// its steps, and the webhook its answer. On a SQLite store there is no
// fleet: the entry gives the qpslab bisect command to run instead. serve
// keeps the pages, the API's handlers and the webhook; what they say and
// do of bisecting is decided here (Dashboard), which serve reaches as its
// Bisector (serve imports nothing above it).

// JobTimeout is how long one attempt of a bisection job queued from an
// entry may run.
const JobTimeout = 24 * 3600.0

// jobAttempts is how many times River tries a bisection job (a later
// attempt resumes the stored walk from its decided steps).
const jobAttempts = 3

// Dashboard is "bisect this" for qpslab serve (serve.Bisector: serve's
// pages and API ask it, through the server they give, for what an entry
// says of bisecting it, to queue one's bisection, and for the answers its
// webhook posts). It remembers which --bisect-src tree holds a pair of
// commits, and the commits of each bisection's range. Its zero value is
// ready.
type Dashboard struct {
	mu     sync.Mutex
	got    map[string]srcFound
	ranges map[int64]map[string]bool // a bisection's commits (rangeOf)
}

// maxCached is the most pairs and ranges a Dashboard keeps (as many as
// serve's caches keep entries): past it, they are dropped and found again.
const maxCached = 2048

type srcFound struct {
	src, gen string // gen: the generation a miss was seen in (a hit is kept)
}

// src is the --bisect-src tree that has both commits, good an
// ancestor of bad ("" for none).
func (d *Dashboard) src(ctx context.Context, s *serve.Server, good, bad string) string {
	if len(s.BisectSrc()) == 0 {
		return ""
	}
	gen, _ := s.Generation(ctx)
	k := good + ".." + bad
	d.mu.Lock()
	f, ok := d.got[k]
	d.mu.Unlock()
	if ok && (f.src != "" || f.gen == gen) {
		return f.src
	}
	f = srcFound{gen: gen}
	for _, src := range s.BisectSrc() {
		if _, cs, err := build.Range(ctx, src, good, bad, true); err == nil && len(cs) > 0 {
			f.src = src
			break
		}
	}
	d.mu.Lock()
	if d.got == nil || len(d.got) > maxCached {
		d.got = map[string]srcFound{}
	}
	d.got[k] = f
	d.mu.Unlock()
	return f.src
}

// question is the entry's question: its largest part of the
// headline metric (qpslab bisect's default) whose builds both name
// commits, else its largest part that does, as a job (no host yet);
// false when none does.
func (d *Dashboard) question(ctx context.Context, s *serve.Server, e serve.AttentionEntry) (fleet.BisectJob, bool) {
	parts := slices.Clone(e.Parts) // the largest first
	slices.SortStableFunc(parts, func(a, b serve.AttentionPart) int {
		return cmp.Compare(boolInt(b.Metric == store.HeadlineMetric), boolInt(a.Metric == store.HeadlineMetric))
	})
	for _, p := range parts {
		if p.Commit == "" || p.BeforeCommit == "" || p.Commit == p.BeforeCommit {
			continue
		}
		j := fleet.BisectJob{
			Good:      p.BeforeCommit,
			Bad:       p.Commit,
			Suite:     p.Suite,
			Test:      p.Test,
			Attention: e.Key,
			Retries:   2,
			Timeout:   JobTimeout,
		}
		if p.Metric != store.HeadlineMetric {
			j.Metric = p.Metric
		}
		if p.Threads > 1 && threadsFlag(p.Suite) {
			j.Set = map[string]string{"threads": strconv.Itoa(p.Threads)} // the series' thread count
		}
		j.Src = d.src(ctx, s, j.Good, j.Bad)
		return j, true
	}
	return fleet.BisectJob{}, false
}

// threadsFlag says whether the suite's plan takes --threads.
func threadsFlag(name string) bool {
	st, err := suite.Get(name)
	if err != nil {
		return false
	}
	_, err = plan.ValuesOf(st, map[string]string{"threads": "2"})
	return err == nil
}

// entriesState is what is known of bisecting the entries: their stored
// bisections and fleet jobs.
type entriesState struct {
	bs      []store.Bisection
	jobs    []fleet.BisectInfo
	commits map[int64]map[string]bool // a bisection's GOOD, BAD and the commits it measured, read once
}

// walked says whether bisection b walks both commits of an entry: each is
// its GOOD or one of the commits after it up to its BAD (its tree's range,
// where this host has the tree; else the commits it measured). A
// bisection's runs are runs: once its builds are in the history, the
// change point it bisects arrives between two of them, another entry,
// which shows it too.
func (d *Dashboard) walked(ctx context.Context, s *serve.Server, bst *entriesState, b store.Bisection, good, bad string) bool {
	cs, ok := bst.commits[b.ID]
	if !ok {
		cs = d.rangeOf(ctx, b)
		if cs == nil {
			cs = map[string]bool{b.Good: true, b.Bad: true}
			if _, steps, err := s.Store().Bisection(ctx, b.ID); err == nil {
				for _, st := range steps {
					cs[st.Commit] = true
				}
			}
		}
		if bst.commits == nil {
			bst.commits = map[int64]map[string]bool{}
		}
		bst.commits[b.ID] = cs
	}
	return cs[good] && cs[bad]
}

// rangeOf is bisection b's GOOD and the commits after it up to BAD in
// its tree, kept (nil where this host has no such tree).
func (d *Dashboard) rangeOf(ctx context.Context, b store.Bisection) map[string]bool {
	d.mu.Lock()
	cs, ok := d.ranges[b.ID]
	d.mu.Unlock()
	if ok {
		return cs
	}
	g, list, err := build.Range(ctx, b.Src, b.Good, b.Bad, b.Params["all-parents"] != "true")
	if err != nil {
		return nil
	}
	cs = map[string]bool{g.Hash: true}
	for _, c := range list {
		cs[c.Hash] = true
	}
	d.mu.Lock()
	if d.ranges == nil || len(d.ranges) > maxCached {
		d.ranges = map[int64]map[string]bool{}
	}
	d.ranges[b.ID] = cs
	d.mu.Unlock()
	return cs
}

func readState(ctx context.Context, s *serve.Server) (entriesState, error) {
	var b entriesState
	var err error
	if b.bs, err = s.Store().Bisections(ctx); err != nil {
		return b, err
	}
	if s.Fleet() != nil {
		if b.jobs, err = s.Fleet().BisectJobs(ctx); err != nil {
			return b, err
		}
	}
	return b, nil
}

// entry is what entry e says of bisecting it; nil when its builds
// name no commits.
func (d *Dashboard) entry(ctx context.Context, s *serve.Server, e serve.AttentionEntry, bst *entriesState) *serve.EntryBisect {
	j, ok := d.question(ctx, s, e)
	if !ok {
		return nil
	}
	eb := &serve.EntryBisect{
		Good:   j.Good,
		Bad:    j.Bad,
		Suite:  j.Suite,
		Test:   j.Test,
		Metric: cmp.Or(j.Metric, store.HeadlineMetric),
		Src:    j.Src,
	}
	cmd := j
	if cmd.Src == "" {
		cmd.Src = "SRC"
	}
	eb.Command = cmd.Command()
	// The newest bisection queued from the entry, else one of the same
	// question (qpslab bisect run by hand), one whose walk has both its
	// commits (walked), or one that found its commit; the newest job
	// queued from it.
	var b *store.Bisection
	for i := range bst.bs { // the newest first
		c := &bst.bs[i]
		same := c.Suite == j.Suite && c.Test == j.Test && (c.Good == j.Good && c.Bad == j.Bad ||
			c.State == store.BisectFound && strings.HasPrefix(c.Result, "first bad commit: "+store.Hash8(j.Bad)+" ") ||
			c.Params["attention"] != e.Key && d.walked(ctx, s, bst, *c, j.Good, j.Bad))
		if c.Params["attention"] == e.Key || b == nil && same {
			if b == nil || c.Params["attention"] == e.Key && b.Params["attention"] != e.Key {
				b = c
			}
		}
	}
	var job *fleet.BisectInfo
	for i := range bst.jobs {
		if bst.jobs[i].Job.Attention == e.Key {
			job = &bst.jobs[i] // oldest first: the last is the newest
		}
	}
	busy := false
	if job != nil {
		eb.Job, eb.JobState, eb.JobError = job.ID, job.State, job.LastError
		busy = !job.Finished()
	}
	if b != nil {
		eb.Bisection, eb.State, eb.Result, eb.Href = b.ID, b.State, b.Result, "/bisections/"+strconv.FormatInt(b.ID, 10)
		if b.State == store.BisectRunning {
			if _, steps, err := s.Store().Bisection(ctx, b.ID); err == nil {
				for _, st := range steps {
					if st.Base != "" { // a measurement (GOOD's own row is none)
						eb.Steps++
					}
				}
			}
		}
	}
	switch {
	case b != nil && b.State == store.BisectRunning && (busy || job == nil):
		eb.Status = fmt.Sprintf("bisecting: step %d (bisection %d)", eb.Steps+1, b.ID)
	case busy && (b == nil || job.Created.After(b.Started) || b.State != store.BisectRunning):
		eb.Status = fmt.Sprintf("bisect queued: job %d (%s) on host %s", job.ID, job.State, job.Job.Host)
		if b != nil && b.State == store.BisectRunning {
			eb.Status = fmt.Sprintf("bisecting: step %d (bisection %d, job %d)", eb.Steps+1, b.ID, job.ID)
		}
	case b != nil && b.State == store.BisectRunning:
		eb.Status = fmt.Sprintf("bisection %d stopped at step %d (job %d %s: %s)",
			b.ID, eb.Steps+1, job.ID, job.State, job.LastError)
	case b != nil:
		eb.Status = "bisected (" + b.State + "): " + b.Result
	case job != nil:
		eb.Status = fmt.Sprintf("bisect job %d %s: %s", job.ID, job.State, job.LastError)
	}
	settled := b != nil && (b.State == store.BisectFound || b.State == store.BisectNoRegression)
	running := busy || b != nil && b.State == store.BisectRunning && job == nil
	switch {
	case s.Fleet() == nil:
		eb.Why = "no fleet: this store is not PostgreSQL (docs/fleet.md); " +
			"run the command on a host with the source tree"
	case j.Src == "":
		eb.Why = "no source tree known with both commits: " +
			"give qpslab serve --bisect-src DIR (a git checkout that has them)"
	case running || settled:
	default:
		eb.Offer = true
	}
	return eb
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Entries sets what each entry says of bisecting it (its Bisect; nil
// where its builds name no commits).
func (d *Dashboard) Entries(ctx context.Context, s *serve.Server, es []serve.AttentionEntry) ([]serve.AttentionEntry, error) {
	has := false
	for _, e := range es {
		for _, p := range e.Parts {
			has = has || p.Commit != "" && p.BeforeCommit != ""
		}
	}
	if !has {
		return es, nil
	}
	bst, err := readState(ctx, s)
	if err != nil {
		return nil, err
	}
	for i := range es {
		es[i].Bisect = d.entry(ctx, s, es[i], &bst)
	}
	return es, nil
}

// maxSet is the most suite flags a queued bisection takes.
const maxSet = 64

// Queue queues the bisection of the entry with key, by who: a fleet job
// (fleet.BisectJob) on a live agent, which runs it as qpslab bisect does
// (RunJob). br is what the API's request says (serve.BisectRequest); the
// entry's bisect after it, its command with the settings queued.
func (d *Dashboard) Queue(ctx context.Context, s *serve.Server, key string, br serve.BisectRequest, who string) (serve.EntryBisect, error) {
	notKey := func(r rune) bool { return (r < '0' || r > '9') && (r < 'a' || r > 'z') }
	if len(key) > 64 || strings.ContainsFunc(key, notKey) {
		return serve.EntryBisect{}, serve.BadInput("key %.64q: give an attention entry's key (GET /api/v1/attention lists them)",
			key)
	}
	if math.IsNaN(br.Threshold) || br.Threshold < 0 || br.Threshold >= 1 {
		return serve.EntryBisect{}, serve.BadInput(
			"threshold %g: give the smallest regression to bisect as a fraction (0.05 for 5 %%), "+
				"or 0 for the host's noise floor",
			br.Threshold,
		)
	}
	if len(br.Set) > maxSet {
		return serve.EntryBisect{}, serve.BadInput("set: at most %d suite flags", maxSet)
	}
	for k, v := range br.Set {
		if k == "" || len(k) > 64 || len(v) > 1000 || strings.ContainsFunc(k+v, unicode.IsControl) {
			return serve.EntryBisect{}, serve.BadInput(
				"set %q: give suite flags as NAME: VALUE "+
					"(a name up to 64 characters, a value up to 1000, no control characters)",
				k,
			)
		}
	}
	if br.Rounds < 0 || br.Rounds > 1000 {
		return serve.EntryBisect{}, serve.BadInput(
			"rounds %d: give 1 to 1000 paired rounds a measurement, or 0 for qpslab bisect's default",
			br.Rounds,
		)
	}
	if br.Retries != nil && (*br.Retries < 0 || *br.Retries > 5) {
		return serve.EntryBisect{}, serve.BadInput("retries %d: give 0 to 5 resumes of a step that cannot tell", *br.Retries)
	}
	es, err := s.AttentionEntries(ctx)
	if err != nil {
		return serve.EntryBisect{}, err
	}
	var e *serve.AttentionEntry
	for i := range es {
		if es[i].Key == key {
			e = &es[i]
		}
	}
	if e == nil {
		return serve.EntryBisect{}, serve.NotFound(
			"key=%s: no attention entry has this key: see GET /api/v1/attention?attention=all",
			key,
		)
	}
	j, ok := d.question(ctx, s, *e)
	if !ok {
		return serve.EntryBisect{}, serve.BadInput(
			"entry %s: its builds name no commits (the runs' commit parameter: "+
				"builds compiled with qpslab builds compile --commit); there is nothing to bisect",
			key,
		)
	}
	if j.Src == "" {
		return serve.EntryBisect{}, serve.Conflict(
			"entry %s: no source tree the server knows has commits %s and %s: give qpslab serve --bisect-src DIR",
			key,
			store.Hash8(j.Good),
			store.Hash8(j.Bad),
		)
	}
	for k, v := range br.Set {
		if j.Set == nil {
			j.Set = map[string]string{}
		}
		j.Set[strings.TrimPrefix(k, "--")] = v
	}
	j.Threshold, j.Rounds, j.Who = br.Threshold, br.Rounds, who
	// The spec each step will run, as the agent will parse it (Parse,
	// through the steps' own planTester): a flag it refuses is this
	// request's error now, not a job's failure later.
	st, err := suite.Get(j.Suite)
	if err == nil {
		err = (&planTester{s: st, o: Options{Set: j.Set, Test: j.Test}}).choose()
	}
	if err != nil {
		return serve.EntryBisect{}, serve.BadInput("set: %v", err)
	}
	if br.Retries != nil {
		j.Retries = *br.Retries
	}
	if s.Fleet() == nil {
		return serve.EntryBisect{}, serve.Conflict(
			"no fleet: this store is not PostgreSQL, so nothing can be queued; run on a host with the source tree: %s",
			j.Command(),
		)
	}
	bst, err := readState(ctx, s)
	if err != nil {
		return serve.EntryBisect{}, err
	}
	if eb := d.entry(ctx, s, *e, &bst); eb != nil && !eb.Offer {
		return serve.EntryBisect{}, serve.Conflict("entry %s: %s", key, eb.Status)
	}
	hosts, err := s.Fleet().Hosts(ctx)
	if err != nil {
		return serve.EntryBisect{}, err
	}
	live := fleet.Live(hosts)
	if br.Host != "" {
		i := slices.IndexFunc(live, func(h fleet.Host) bool { return h.Name == br.Host })
		if i < 0 {
			return serve.EntryBisect{}, serve.Conflict(
				"host %s: no live agent has that name (live: %s): see qpslab fleet hosts",
				br.Host,
				strings.Join(fleet.Names(live), ", "),
			)
		}
		j.Host = br.Host
	} else {
		if len(live) == 0 {
			return serve.EntryBisect{}, serve.Conflict("no live agent in the fleet: " +
				"start one with qpslab agent --store … on a host that has the source tree")
		}
		// The agent on the host the regression was measured on, else an
		// idle one, else the first.
		pick := live[0]
		for _, h := range live {
			if h.State == fleet.Idle && pick.State != fleet.Idle {
				pick = h
			}
		}
		for _, p := range e.Parts {
			for _, h := range live {
				if p.Host != "" && h.HostID == p.Host && p.Commit == j.Bad {
					pick = h
				}
			}
		}
		j.Host = pick.Name
	}
	id, err := s.Fleet().SubmitBisect(ctx, j, jobAttempts)
	if errors.Is(err, fleet.ErrBisecting) {
		return serve.EntryBisect{}, serve.Conflict("entry %s: %v", key, err)
	}
	if err != nil {
		return serve.EntryBisect{}, err
	}
	s.Logf("bisect %s: job %d queued on host %s by %s (%s)", e.Arrived, id, j.Host, who, j.Command())
	bst.jobs = append(bst.jobs, fleet.BisectInfo{ID: id, Job: j, State: "available"})
	eb := d.entry(ctx, s, *e, &bst)
	eb.Command = j.Command() // with the settings queued
	return *eb, nil
}

// Answered are the bisections queued from attention entries that have
// ended: the answers serve's webhook posts, once each.
func (d *Dashboard) Answered(ctx context.Context, s *serve.Server) ([]store.Bisection, error) {
	all, err := s.Store().Bisections(ctx)
	if err != nil {
		return nil, err
	}
	var bs []store.Bisection // asked from an entry, ended
	for _, b := range all {
		if b.Params["attention"] != "" && b.State != store.BisectRunning {
			bs = append(bs, b)
		}
	}
	return bs, nil
}
