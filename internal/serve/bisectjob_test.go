package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

// gitTree is a git repository of n commits; it returns its folder and
// the hashes, oldest first.
func gitTree(t *testing.T, n int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(
			os.Environ(),
			"GIT_AUTHOR_NAME=t",
			"GIT_AUTHOR_EMAIL=t@t",
			"GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@t",
		)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	var hs []string
	for i := 0; i < n; i++ {
		os.WriteFile(filepath.Join(dir, "f"), []byte(fmt.Sprint(i)), 0o644)
		git("add", ".")
		git("commit", "-q", "-m", fmt.Sprintf("commit %d", i))
		hs = append(hs, git("rev-parse", "HEAD"))
	}
	return dir, hs
}

// commitRuns are twelve builds of update-index_range=100, each compiled
// from commit hs[i] (its runs' commit parameter), QPS 30 % lower from the
// seventh on: the entry's question is hs[5]..hs[6].
func commitRuns(hs []string) []result.Run {
	runs := regressed("update-index_range=100", 1000, 0.3, 6)
	for i := range runs {
		if hs == nil {
			delete(runs[i].Params, "commit")
		} else {
			runs[i].Params["commit"] = hs[i]
		}
	}
	return runs
}

func sqliteStore(t *testing.T, runs []result.Run) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Import(ctx, runs, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return st
}

func bisectAPI(t *testing.T, ts *testServer, key, tok, body string) answer {
	t.Helper()
	return ts.do(t, "POST", "/api/v1/attention/"+key+"/bisect", tok, "application/json", strings.NewReader(body))
}

// On a SQLite store there is no fleet: the entry whose builds name
// commits says so and gives the qpslab bisect command to run, the API
// refuses with the same; the API needs the triage scope, and refuses an
// unknown entry, an entry without commits, one no known tree holds, and
// bad settings, each in one line.
func TestBisectThisWithoutAFleet(t *testing.T) {
	src, hs := gitTree(t, 12)
	st := sqliteStore(t, commitRuns(hs))
	ts := start(t, st, func(o *Options) { o.BisectSrc, o.Bisect = []string{src}, TestBisector() })
	es := attentionAPI(t, ts, "").Entries
	if len(es) != 1 || es[0].Bisect == nil {
		t.Fatalf("entries %+v", es)
	}
	e := es[0]
	want := fmt.Sprintf(
		"qpslab bisect %s %s --src %s --suite sysbench --test update-index_range=100",
		hs[5],
		hs[6],
		src,
	)
	// A reader who may not ask a bisection is not shown the server's
	// folder: the tree's last element, and SRC in the command.
	shown := strings.Replace(want, "--src "+src, "--src SRC", 1)
	if b := e.Bisect; b.Good != hs[5] || b.Bad != hs[6] || b.Src != filepath.Base(src) || b.Offer ||
		!strings.Contains(b.Why, "no fleet") ||
		b.Command != shown {
		t.Errorf("the entry's bisect: %+v\nwant the command %s", b, shown)
	}
	home := ts.get(t, "/")
	if !strings.Contains(home.body, `class="note bisect-why"`) ||
		!strings.Contains(home.body, "<code>"+shown+"</code>") || strings.Contains(home.body, src) ||
		strings.Contains(home.body, "bisect-this") {
		t.Errorf("the home page does not give the command, names the folder, or offers the button:\n%s", home.body)
	}
	tok := ts.token(t, "alice", ScopeRead, ScopeTriage)
	reader := ts.token(t, "bob", ScopeRead)
	apiErr(t, "no token", bisectAPI(t, ts, e.Key, "", ""), 401, "triage scope")
	apiErr(t, "a read token", bisectAPI(t, ts, e.Key, reader, ""), 403, "not triage")
	apiErr(t, "no fleet", bisectAPI(t, ts, e.Key, tok, ""), 409, "no fleet: this store is not PostgreSQL")
	apiErr(t, "no fleet, the command (its folder too, for a triager)", bisectAPI(t, ts, e.Key, tok, ""), 409, want)
	apiErr(t, "an unknown entry", bisectAPI(t, ts, "gnope", tok, ""), 404, "no attention entry has this key")
	long := strings.Repeat("g", 1000)
	apiErr(t, "a key that is none", bisectAPI(t, ts, long, tok, ""), 400, "give an attention entry's key")
	apiErr(t, "a key with an escape", bisectAPI(t, ts, "g%1b%5B2J", tok, ""), 400, "give an attention entry's key")
	apiErr(t, "a threshold that is none", bisectAPI(t, ts, e.Key, tok, `{"threshold": 1e308}`), 400, "threshold")
	apiErr(t, "a negative threshold", bisectAPI(t, ts, e.Key, tok, `{"threshold": -0.1}`), 400, "threshold")
	apiErr(
		t,
		"a setting with a control character",
		bisectAPI(t, ts, e.Key, tok, `{"set": {"rows": "1\u001b[2J"}}`),
		400,
		"control characters",
	)
	apiErr(t, "an unknown field", bisectAPI(t, ts, e.Key, tok, `{"thresold": 0.1}`), 400, "not a bisection request")
	apiErr(t, "rounds", bisectAPI(t, ts, e.Key, tok, `{"rounds": 5000}`), 400, "rounds 5000")
	// The steps' spec is parsed as the agent will (plan.Parse): a flag
	// the suite refuses is the request's error.
	apiErr(t, "a flag the suite refuses", bisectAPI(t, ts, e.Key, tok, `{"set": {"threads": "0"}}`), 400, "--threads 0")
	apiErr(t, "a flag the suite lacks", bisectAPI(t, ts, e.Key, tok, `{"set": {"nope": "1"}}`), 400, "--nope")

	// No tree the server knows holds the commits.
	ts2 := start(t, st, func(o *Options) { o.Bisect = TestBisector() })
	e2 := attentionAPI(t, ts2, "").Entries[0]
	if e2.Bisect == nil || !strings.Contains(e2.Bisect.Command, "--src SRC") {
		t.Errorf("without --bisect-src: %+v", e2.Bisect)
	}
	tok2 := ts2.token(t, "carol", ScopeTriage)
	apiErr(t, "no source tree", bisectAPI(t, ts2, e2.Key, tok2, ""), 409, "give qpslab serve --bisect-src DIR")
	// Builds that name no commits.
	ts3 := start(t, sqliteStore(t, commitRuns(nil)), func(o *Options) { o.BisectSrc, o.Bisect = []string{src}, TestBisector() })
	e3 := attentionAPI(t, ts3, "").Entries[0]
	if e3.Bisect != nil {
		t.Errorf("builds without commits: %+v", e3.Bisect)
	}
	apiErr(
		t,
		"no commits",
		bisectAPI(t, ts3, e3.Key, ts3.token(t, "dave", ScopeTriage), ""),
		400,
		"its builds name no commits",
	)

	// A bisection of a wider range (qpslab bisect by hand, or one whose
	// builds' runs moved the change point) that walked both of the
	// entry's commits is its progress, and once it found the entry's
	// commit, its answer.
	wide := store.Bisection{Src: src, Good: hs[0], Bad: hs[11], Suite: "sysbench", Test: "update-index_range=100",
		Metric: "qps", State: store.BisectRunning}
	b, err := st.StartBisection(ctx, wide)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{hs[0], hs[5], hs[8], hs[6]} {
		step := store.BisectStep{Commit: c, Base: hs[0], Kind: "good"}
		if c == hs[0] {
			step.Base = ""
		}
		if _, err := st.AddBisectStep(ctx, b.ID, step); err != nil {
			t.Fatal(err)
		}
	}
	if eb := attentionAPI(t, ts, "").Entries[0].Bisect; eb.Bisection != b.ID || eb.Offer ||
		eb.Status != fmt.Sprintf("bisecting: step 4 (bisection %d)", b.ID) {
		t.Errorf("the entry's progress from a wider bisection: %+v", eb)
	}
	b.State, b.Ended = store.BisectFound, time.Now()
	b.Result = "first bad commit: " + hs[6][:8] + " commit 6: 0.70 against its parent"
	if err := st.SetBisection(ctx, b); err != nil {
		t.Fatal(err)
	}
	if eb := attentionAPI(t, ts, "").Entries[0].Bisect; eb.Bisection != b.ID ||
		!strings.HasPrefix(eb.Status, "bisected (found): first bad commit: "+hs[6][:8]) {
		t.Errorf("the entry's answer from a wider bisection: %+v", eb)
	}
}

// On a PostgreSQL store with a fleet, the entry's button (the form, with
// the triage scope and its CSRF token) queues a bisection job on a live
// agent; the entry shows it queued, then the bisection's steps as the
// agent stores them, then its answer, which the webhook posts once.
func TestBisectThisQueuesAFleetJob(t *testing.T) {
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	_, dsn := testenv.FleetDatabase(t)
	st, err := store.Open(c, dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fl, err := fleet.Open(c, dsn, st.Where())
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	src, hs := gitTree(t, 12)
	if _, err := st.Import(c, commitRuns(hs), store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	h := newHook(t, 1) // its first post fails: retried
	ts := start(t, st, func(o *Options) {
		o.BisectSrc, o.Fleet, o.Webhook, o.Bisect = []string{src}, fl, h.URL, TestBisector()
	})
	if err := ts.Refresh(c); err != nil { // the alerts' baseline: the regression is known
		t.Fatal(err)
	}
	e := attentionAPI(t, ts, "").Entries[0]
	if b := e.Bisect; b == nil || !b.Offer || b.Why != "" {
		t.Fatalf("the entry's bisect: %+v", b)
	}
	tok := ts.token(t, "alice", ScopeRead, ScopeTriage)
	apiErr(t, "no agent", bisectAPI(t, ts, e.Key, tok, ""), 409, "no live agent")

	// An agent whose bisections are the test's: it stores a bisection
	// with the entry's key, as qpslab bisect does, step by step.
	got := make(chan fleet.BisectAttempt, 1)
	step, end := make(chan struct{}), make(chan struct{})
	a := &fleet.Agent{
		Fleet: fl,
		Host:  fleet.Host{Name: "bench-1", Fingerprint: []byte(`{}`), Hostname: "here", Interval: time.Second},
		Work:  func(context.Context, fleet.Attempt) error { return nil },
		Bisect: func(ctx context.Context, at fleet.BisectAttempt) error {
			got <- at
			<-step
			b, err := st.StartBisection(
				ctx,
				store.Bisection{
					Src:    at.Job.Src,
					Good:   at.Job.Good,
					Bad:    at.Job.Bad,
					Suite:  at.Job.Suite,
					Test:   at.Job.Test,
					Metric: "qps",
					Params: map[string]string{"attention": at.Job.Attention},
					State:  store.BisectRunning,
				},
			)
			if err != nil {
				return err
			}
			// GOOD's own row, then a measurement.
			for _, s := range []store.BisectStep{{Commit: at.Job.Good, Kind: "good"},
				{Commit: at.Job.Bad, Base: at.Job.Good, Kind: "bad", Rel: 0.7, Lo: 0.68, Hi: 0.72}} {
				if _, err := st.AddBisectStep(ctx, b.ID, s); err != nil {
					return err
				}
			}
			<-end
			b.State, b.Ended = store.BisectFound, time.Now()
			b.Result = "first bad commit: " + at.Job.Bad[:8] + " commit 6: 0.70 against its parent"
			return st.SetBisection(ctx, b)
		},
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(c, nil) }()
	testenv.WaitFor(t, time.Minute, "the agent is live", func() bool {
		hs, err := fl.Hosts(c)
		return err == nil && len(fleet.Live(hs)) == 1
	})

	// The page: a reader is told to log in; a triage session gets the
	// button, whose form needs its CSRF token.
	if home := ts.get(t, "/"); strings.Contains(home.body, "bisect-this") ||
		!strings.Contains(home.body, "Bisecting needs a token with the triage scope") {
		t.Errorf("a reader is offered the button")
	}
	session := ts.login(t, tok)
	home := ts.page(t, "/", session)
	m := csrfInput.FindStringSubmatch(home.body[strings.Index(home.body, `<form class="bisect-this"`):])
	if m == nil {
		t.Fatalf("no bisect-this form for a triage session:\n%s", home.body)
	}
	f := form{m[1], cookieOf(home, csrfCookie)}
	noCSRF := form{"", f.cookie}
	if a := ts.post(t, "/attention/bisect", url.Values{"key": {e.Key}}, noCSRF, ts.URL, session); a.status != 403 {
		t.Errorf("the form without its CSRF token: %d", a.status)
	}
	if a := ts.post(t, "/attention/bisect", url.Values{"key": {e.Key}}, f, ts.URL, session); a.status != 303 ||
		a.header.Get("Location") != "/#att-"+e.Key {
		t.Fatalf("the form: %d %s %s", a.status, a.header.Get("Location"), a.body)
	}
	at := <-got
	if j := at.Job; j.Good != hs[5] || j.Bad != hs[6] || j.Src != src || j.Suite != "sysbench" ||
		j.Test != "update-index_range=100" ||
		j.Attention != e.Key || j.Host != "bench-1" ||
		j.Who != "alice" ||
		j.Retries != 2 {
		t.Errorf("the job: %+v", j)
	}
	entry := func() EntryBisect {
		t.Helper()
		b := attentionAPI(t, ts, "").Entries[0].Bisect
		if b == nil {
			t.Fatal("the entry lost its bisect")
		}
		return *b
	}
	if b := entry(); b.Offer || b.Job != at.ID ||
		!strings.HasPrefix(b.Status, fmt.Sprintf("bisect queued: job %d (running) on host bench-1", at.ID)) {
		t.Errorf("queued: %+v", b)
	}
	apiErr(t, "asked twice", bisectAPI(t, ts, e.Key, tok, ""), 409, "bisect queued")
	step <- struct{}{}
	testenv.WaitFor(t, time.Minute, "the entry shows the bisection's step", func() bool {
		return strings.HasPrefix(entry().Status, "bisecting: step 2 (bisection 1")
	})
	if home := ts.page(t, "/", session); !strings.Contains(home.body, "bisecting: step 2 (bisection 1") ||
		!strings.Contains(home.body, `href="/bisections/1"`) {
		t.Errorf("the page does not show the step")
	}
	if p := ts.page(t, "/bisections/1", session); !strings.Contains(
		p.body,
		`<a href="/?attention=all#att-`+e.Key+`">its attention entry</a>`,
	) {
		t.Errorf("the bisection's page does not link its entry:\n%s", p.body)
	}
	close(end)
	testenv.WaitFor(
		t,
		time.Minute,
		"the answer",
		func() bool { return entry().State == store.BisectFound && entry().JobState == "completed" },
	)
	if b := entry(); b.Offer || !strings.Contains(b.Status, "bisected (found): first bad commit: "+hs[6][:8]) {
		t.Errorf("found: %+v", b)
	}
	// The webhook: the answer once (its first post failed: the next
	// refresh posts it again), never twice.
	for i := 0; i < 3; i++ {
		ts.Refresh(c)
	}
	var answers []Payload
	for _, raw := range h.posts() {
		var p Payload
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		if p.Qpslab.Event == "bisection" {
			answers = append(answers, p)
		}
	}
	if len(answers) != 2 {
		t.Fatalf("%d bisection posts, want 2 (a failed one and its retry): %s", len(answers), h.posts())
	}
	d := answers[1].Qpslab
	if d.Bisection != 1 || d.State != store.BisectFound || d.Key != e.Key || d.Commit != hs[6] ||
		d.BeforeCommit != hs[5] ||
		!strings.HasPrefix(d.Answer, "first bad commit: "+hs[6][:8]) ||
		d.Link != ts.URL+"/bisections/1" ||
		!strings.Contains(answers[1].Text, "bisection 1 of sysbench update-index_range=100 qps between "+
			hs[5][:8]+" and "+hs[6][:8]+": found: first bad commit") {
		t.Errorf("the webhook's answer: %s\n%+v", answers[1].Text, d)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the agent: %v", err)
	}
}
