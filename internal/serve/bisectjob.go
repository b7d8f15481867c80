package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

// "Bisect this": an attention entry whose builds name commits (the runs'
// commit parameter: builds compiled from a git tree) and whose commits a
// source tree the server knows holds (--bisect-src) is bisected by a
// fleet job (fleet.BisectJob: qpslab bisect on an agent), queued from
// the entry (its form, or POST /api/v1/attention/{key}/bisect, with the
// triage scope). The bisection is stored as qpslab bisect stores it, with
// the entry's key: the entry shows its progress and answer, /bisections
// its steps, and the webhook its answer. On a SQLite store there is no
// fleet: the entry gives the qpslab bisect command to run instead.

// BisectTimeout is how long one attempt of a bisection job may run.
const BisectTimeout = 24 * 3600.0

// bisectAttempts is how many times River tries a bisection job (a later
// attempt resumes the stored walk from its decided steps).
const bisectAttempts = 3

// EntryBisect is what an attention entry says of bisecting it.
type EntryBisect struct {
	// The question: the part bisected (the largest with both commits).
	Good   string `json:"good,omitempty"` // the commit of the build before
	Bad    string `json:"bad,omitempty"`  // the commit of the build it arrived in
	Suite  string `json:"suite,omitempty"`
	Test   string `json:"test,omitempty"`
	Metric string `json:"metric,omitempty"`
	Src    string `json:"src,omitempty"` // the source tree that holds both
	// Offer says the entry can be bisected now from the page or the API
	// (a fleet, the question and its tree known, nothing bisecting it).
	Offer bool `json:"offer"`
	// Why says why it cannot be queued ("" when it can, or is).
	Why string `json:"why,omitempty"`
	// Command is the qpslab bisect command that asks the question (the
	// way to run it where there is no fleet).
	Command string `json:"command,omitempty"`
	// Job is the newest fleet job queued for it, and its River state.
	Job      int64  `json:"job,omitempty"`
	JobState string `json:"job_state,omitempty"`
	JobError string `json:"job_error,omitempty"`
	// Bisection is the stored bisection of the question (0: none yet),
	// its state, its measured steps so far, and its answer.
	Bisection int64  `json:"bisection,omitempty"`
	State     string `json:"state,omitempty"`
	Steps     int    `json:"steps,omitempty"`
	Result    string `json:"result,omitempty"`
	// Status is all of it in one line, as the entry shows it.
	Status string `json:"status,omitempty"`
	Href   string `json:"href,omitempty"` // the bisection's page
}

// srcCache remembers which --bisect-src tree holds a pair of commits.
type srcCache struct {
	mu     sync.Mutex
	got    map[string]srcFound
	ranges map[int64]map[string]bool // a bisection's commits (bisectRange)
}

type srcFound struct {
	src, gen string // gen: the generation a miss was seen in (a hit is kept)
}

// bisectSrc is the --bisect-src tree that has both commits, good an
// ancestor of bad ("" for none).
func (s *Server) bisectSrc(ctx context.Context, good, bad string) string {
	if len(s.o.BisectSrc) == 0 {
		return ""
	}
	gen, _ := s.cache.generation(ctx)
	k := good + ".." + bad
	s.srcs.mu.Lock()
	f, ok := s.srcs.got[k]
	s.srcs.mu.Unlock()
	if ok && (f.src != "" || f.gen == gen) {
		return f.src
	}
	f = srcFound{gen: gen}
	for _, src := range s.o.BisectSrc {
		if _, cs, err := build.Range(ctx, src, good, bad, true); err == nil && len(cs) > 0 {
			f.src = src
			break
		}
	}
	s.srcs.mu.Lock()
	if s.srcs.got == nil || len(s.srcs.got) > maxEntries {
		s.srcs.got = map[string]srcFound{}
	}
	s.srcs.got[k] = f
	s.srcs.mu.Unlock()
	return f.src
}

// bisectQuestion is the entry's question: its largest part of the
// headline metric (qpslab bisect's default) whose builds both name
// commits, else its largest part that does, as a job (no host yet);
// false when none does.
func (s *Server) bisectQuestion(ctx context.Context, e AttentionEntry) (fleet.BisectJob, bool) {
	parts := slices.Clone(e.Parts) // the largest first
	slices.SortStableFunc(parts, func(a, b AttentionPart) int {
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
			Timeout:   BisectTimeout,
		}
		if p.Metric != store.HeadlineMetric {
			j.Metric = p.Metric
		}
		if p.Threads > 1 && threadsFlag(p.Suite) {
			j.Set = map[string]string{"threads": strconv.Itoa(p.Threads)} // the series' thread count
		}
		j.Src = s.bisectSrc(ctx, j.Good, j.Bad)
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

// bisectState is what is known of bisecting the entries: their stored
// bisections and fleet jobs.
type bisectState struct {
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
func (s *Server) walked(ctx context.Context, bst *bisectState, b store.Bisection, good, bad string) bool {
	cs, ok := bst.commits[b.ID]
	if !ok {
		cs = s.bisectRange(ctx, b)
		if cs == nil {
			cs = map[string]bool{b.Good: true, b.Bad: true}
			if _, steps, err := s.st.Bisection(ctx, b.ID); err == nil {
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

// bisectRange is bisection b's GOOD and the commits after it up to BAD in
// its tree, kept (nil where this host has no such tree).
func (s *Server) bisectRange(ctx context.Context, b store.Bisection) map[string]bool {
	s.srcs.mu.Lock()
	cs, ok := s.srcs.ranges[b.ID]
	s.srcs.mu.Unlock()
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
	s.srcs.mu.Lock()
	if s.srcs.ranges == nil || len(s.srcs.ranges) > maxEntries {
		s.srcs.ranges = map[int64]map[string]bool{}
	}
	s.srcs.ranges[b.ID] = cs
	s.srcs.mu.Unlock()
	return cs
}

func (s *Server) readBisectState(ctx context.Context) (bisectState, error) {
	var b bisectState
	var err error
	if b.bs, err = s.st.Bisections(ctx); err != nil {
		return b, err
	}
	if s.o.Fleet != nil {
		if b.jobs, err = s.o.Fleet.BisectJobs(ctx); err != nil {
			return b, err
		}
	}
	return b, nil
}

// entryBisect is what entry e says of bisecting it; nil when its builds
// name no commits.
func (s *Server) entryBisect(ctx context.Context, e AttentionEntry, bst *bisectState) *EntryBisect {
	j, ok := s.bisectQuestion(ctx, e)
	if !ok {
		return nil
	}
	eb := &EntryBisect{
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
			c.State == store.BisectFound && strings.HasPrefix(c.Result, "first bad commit: "+short(j.Bad)+" ") ||
			c.Params["attention"] != e.Key && s.walked(ctx, bst, *c, j.Good, j.Bad))
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
			if _, steps, err := s.st.Bisection(ctx, b.ID); err == nil {
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
	case s.o.Fleet == nil:
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

// withBisect adds to the entries what they say of bisecting them.
func (s *Server) withBisect(ctx context.Context, es []AttentionEntry) ([]AttentionEntry, error) {
	has := false
	for _, e := range es {
		for _, p := range e.Parts {
			has = has || p.Commit != "" && p.BeforeCommit != ""
		}
	}
	if !has {
		return es, nil
	}
	bst, err := s.readBisectState(ctx)
	if err != nil {
		return nil, err
	}
	for i := range es {
		es[i].Bisect = s.entryBisect(ctx, es[i], &bst)
	}
	return es, nil
}

// errConflict is a request the server's state refuses (409).
type errConflict struct{ msg string }

func (e *errConflict) Error() string { return e.msg }

func conflict(format string, a ...any) error { return &errConflict{fmt.Sprintf(format, a...)} }

// bisectRequest is what POST /api/v1/attention/{key}/bisect may say: the
// suite's flags (as qpslab bisect's --set), the threshold, the host.
type bisectRequest struct {
	Set       map[string]string `json:"set"`
	Threshold float64           `json:"threshold"`
	Host      string            `json:"host"`
	Retries   *int              `json:"retries"`
	Rounds    int               `json:"rounds"`
}

const maxSet = 64

// queueBisect queues the bisection of the entry with key, by who.
func (s *Server) queueBisect(ctx context.Context, key string, br bisectRequest, who string) (EntryBisect, error) {
	notKey := func(r rune) bool { return (r < '0' || r > '9') && (r < 'a' || r > 'z') }
	if len(key) > 64 || strings.ContainsFunc(key, notKey) {
		return EntryBisect{}, badInput("key %.64q: give an attention entry's key (GET /api/v1/attention lists them)",
			key)
	}
	if math.IsNaN(br.Threshold) || br.Threshold < 0 || br.Threshold >= 1 {
		return EntryBisect{}, badInput(
			"threshold %g: give the smallest regression to bisect as a fraction (0.05 for 5 %%), "+
				"or 0 for the host's noise floor",
			br.Threshold,
		)
	}
	if len(br.Set) > maxSet {
		return EntryBisect{}, badInput("set: at most %d suite flags", maxSet)
	}
	for k, v := range br.Set {
		if k == "" || len(k) > 64 || len(v) > 1000 || strings.ContainsFunc(k+v, unicode.IsControl) {
			return EntryBisect{}, badInput(
				"set %q: give suite flags as NAME: VALUE "+
					"(a name up to 64 characters, a value up to 1000, no control characters)",
				k,
			)
		}
	}
	if br.Rounds < 0 || br.Rounds > 1000 {
		return EntryBisect{}, badInput(
			"rounds %d: give 1 to 1000 paired rounds a measurement, or 0 for qpslab bisect's default",
			br.Rounds,
		)
	}
	if br.Retries != nil && (*br.Retries < 0 || *br.Retries > 5) {
		return EntryBisect{}, badInput("retries %d: give 0 to 5 resumes of a step that cannot tell", *br.Retries)
	}
	es, err := s.attentionEntries(ctx)
	if err != nil {
		return EntryBisect{}, err
	}
	var e *AttentionEntry
	for i := range es {
		if es[i].Key == key {
			e = &es[i]
		}
	}
	if e == nil {
		return EntryBisect{}, notFound(
			"key=%s: no attention entry has this key: see GET /api/v1/attention?attention=all",
			key,
		)
	}
	j, ok := s.bisectQuestion(ctx, *e)
	if !ok {
		return EntryBisect{}, badInput(
			"entry %s: its builds name no commits (the runs' commit parameter: "+
				"builds compiled with qpslab builds compile --commit); there is nothing to bisect",
			key,
		)
	}
	if j.Src == "" {
		return EntryBisect{}, conflict(
			"entry %s: no source tree the server knows has commits %s and %s: give qpslab serve --bisect-src DIR",
			key,
			short(j.Good),
			short(j.Bad),
		)
	}
	for k, v := range br.Set {
		if j.Set == nil {
			j.Set = map[string]string{}
		}
		j.Set[strings.TrimPrefix(k, "--")] = v
	}
	j.Threshold, j.Rounds, j.Who = br.Threshold, br.Rounds, who
	if br.Retries != nil {
		j.Retries = *br.Retries
	}
	if s.o.Fleet == nil {
		return EntryBisect{}, conflict(
			"no fleet: this store is not PostgreSQL, so nothing can be queued; run on a host with the source tree: %s",
			j.Command(),
		)
	}
	bst, err := s.readBisectState(ctx)
	if err != nil {
		return EntryBisect{}, err
	}
	if eb := s.entryBisect(ctx, *e, &bst); eb != nil && !eb.Offer {
		return EntryBisect{}, conflict("entry %s: %s", key, eb.Status)
	}
	hosts, err := s.o.Fleet.Hosts(ctx)
	if err != nil {
		return EntryBisect{}, err
	}
	live := fleet.Live(hosts)
	if br.Host != "" {
		i := slices.IndexFunc(live, func(h fleet.Host) bool { return h.Name == br.Host })
		if i < 0 {
			return EntryBisect{}, conflict(
				"host %s: no live agent has that name (live: %s): see qpslab fleet hosts",
				br.Host,
				strings.Join(fleet.Names(live), ", "),
			)
		}
		j.Host = br.Host
	} else {
		if len(live) == 0 {
			return EntryBisect{}, conflict("no live agent in the fleet: " +
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
	id, err := s.o.Fleet.SubmitBisect(ctx, j, bisectAttempts)
	if errors.Is(err, fleet.ErrBisecting) {
		return EntryBisect{}, conflict("entry %s: %v", key, err)
	}
	if err != nil {
		return EntryBisect{}, err
	}
	s.logf("bisect %s: job %d queued on host %s by %s (%s)", e.Arrived, id, j.Host, who, j.Command())
	bst.jobs = append(bst.jobs, fleet.BisectInfo{ID: id, Job: j, State: "available"})
	eb := s.entryBisect(ctx, *e, &bst)
	eb.Command = j.Command() // with the settings queued
	return *eb, nil
}

func short(h string) string { return h[:min(len(h), 8)] }

// bisectForm is the entry's "bisect this" button: POST /attention/bisect,
// then back to the entry.
func (s *Server) bisectForm(w http.ResponseWriter, r *http.Request) {
	if !s.checkCSRF(w, r) {
		return
	}
	f := r.PostForm
	key := f.Get("key")
	if _, err := s.queueBisect(r.Context(), key, bisectRequest{}, triageWhoOf(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	back := "/"
	if fl := f.Get("attention"); fl != "" && fl != "open" {
		back = withQuery("/", url.Values{"attention": {fl}})
	}
	http.Redirect(w, r, back+"#att-"+key, http.StatusSeeOther)
}

// apiBisect queues an entry's bisection: POST
// /api/v1/attention/{key}/bisect with an optional JSON body (set,
// threshold, host, retries), a bearer token of the triage scope.
func (s *Server) apiBisect(w http.ResponseWriter, r *http.Request) {
	var br bisectRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err == nil && len(strings.TrimSpace(string(body))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		err = dec.Decode(&br)
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "the body is not a bisection request: give nothing, or "+
			`{"set": {NAME: VALUE}, "threshold": 0.05, "rounds": 10, "host": AGENT, "retries": 2}: `+
			strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	eb, err := s.queueBisect(r.Context(), r.PathValue("key"), br, triageWhoOf(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.apiJSON(w, r, http.StatusAccepted, eb)
}

// bisectAnswers posts to the webhook, once each, the answers of the
// bisections queued from attention entries that have ended (the alerts'
// record keeps it once, and retries a failed post up to maxAttempts).
func (s *Server) bisectAnswers(ctx context.Context) error {
	all, err := s.st.Bisections(ctx)
	if err != nil {
		return err
	}
	var bs []store.Bisection // asked from an entry, ended
	for _, b := range all {
		if b.Params["attention"] != "" && b.State != store.BisectRunning {
			bs = append(bs, b)
		}
	}
	if len(bs) == 0 {
		return nil
	}
	as, err := s.st.Alerts(ctx)
	if err != nil {
		return err
	}
	known := map[string]store.Alert{}
	for _, a := range as {
		known[a.Key] = a
	}
	var errs []error
	for _, b := range bs {
		ak := fmt.Sprintf("bisection-%d-%s", b.ID, b.State)
		a, seen := known[ak]
		if seen && a.State != store.AlertFailed {
			continue
		}
		alert := store.Alert{
			Key:     ak,
			Series:  b.Suite + " " + b.Test + " " + b.Metric,
			Kind:    "bisection",
			Arrived: short(b.Bad),
		}
		added := false
		if !seen {
			if added, err = s.st.AddAlert(ctx, alert, s.o.Now()); err != nil {
				return err
			}
		} else if added, err = s.st.ClaimAlert(ctx, ak, maxAttempts); err != nil {
			errs = append(errs, err)
			continue
		}
		if !added {
			continue
		}
		d := bisectionDetail(b, s.link("/bisections/"+strconv.FormatInt(b.ID, 10)))
		serr := s.post(ctx, d)
		if serr != nil {
			s.logf("bisection %d: the webhook failed: %v", b.ID, serr)
			errs = append(errs, fmt.Errorf("bisection %d: %w", b.ID, serr))
		} else {
			s.logf("bisection %d: %s posted to the webhook", b.ID, b.State)
		}
		if err := s.st.AlertDone(ctx, ak, serr, s.o.Now()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// bisectionDetail is a bisection's answer as the webhook receives it.
func bisectionDetail(b store.Bisection, link string) AlertDetail {
	return AlertDetail{
		Event:        "bisection",
		SeriesChange: SeriesChange{Series: b.Suite + " " + b.Test, Suite: b.Suite, Test: b.Test, Metric: b.Metric},
		Commit:       b.Bad,
		BeforeCommit: b.Good,
		Link:         link,
		Key:          b.Params["attention"],
		State:        b.State,
		Answer:       b.Result,
		Bisection:    b.ID,
	}
}
