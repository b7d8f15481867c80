// Package fleet owns the fleet of benchmark hosts: plans queued as jobs on
// River (github.com/riverqueue/river) in the shared PostgreSQL store, one
// job per host, and the agents that work them. An agent registers its host
// (its name, labels, fingerprint, and the builds and configs it has), works
// one job at a time from its host's queue, and heartbeats; a host whose
// heartbeats stop is lost. River retries a job that failed, and one whose
// agent vanished mid-job (its rescuer, once the job's timeout has passed),
// up to the job's attempts.
//
// The queue is River's, not one written here: a job is a row of River's
// river_job table, inserted, fetched, retried and cancelled by River in
// PostgreSQL transactions, beside the results the job writes. River's
// schema is installed by the store's migrations (internal/store).
//
// It runs no plan: an agent hands each job to the Work function it is
// given (the command runs the plan as qpslab run does). It knows nothing of
// suites, builds, sandboxes or the runs a job stores.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// Kind is the River job kind of a plan.
const Kind = "qpslab_plan"

// Job is one plan for one host: what `qpslab fleet submit` queues, as
// River's job arguments.
type Job struct {
	Suite string `json:"suite"`
	// Params are the plan's and the suite's parameters that were given,
	// as text (the flags' values); the rest take their defaults.
	Params map[string]string `json:"params"`
	// Spec is the plan's versioned plan.Spec (plan.JobSpec), which the
	// agent runs (plan.FromSpec) where it is set; a job written before
	// jobs carried it has Params alone, which the agent parses as then.
	// Params stay beside it, for the listings and for older agents.
	Spec json.RawMessage `json:"spec,omitempty"`
	// Files are the local files the plan reads (a script, an init file:
	// suite.Values.ReadFile), by the path its parameters name, as they
	// were on the machine that submitted it: the agent reads these.
	Files map[string][]byte `json:"files,omitempty"`
	// Host is the agent name the job runs on.
	Host string `json:"host"`
	// Timeout is how long one attempt may run (seconds): past it the
	// attempt is cancelled, and a job whose agent vanished is retried
	// once it has run this long (River's rescuer).
	Timeout float64 `json:"timeout_s"`
	// Batch names the submit the job came from: its jobs on every host
	// share it.
	Batch string `json:"batch"`
	// Spread, if set, makes the job one part of a spread run: its share
	// of the plan's load, at once with the other parts' (SubmitSpread).
	Spread *Spread `json:"spread,omitempty"`
}

// Kind is the job's River kind.
func (Job) Kind() string { return Kind }

// TimeoutDuration is Timeout as a duration.
func (j Job) TimeoutDuration() time.Duration { return time.Duration(j.Timeout * float64(time.Second)) }

// Queue is the River queue of a host's jobs: one queue per host, worked
// by its agent alone, one job at a time.
func Queue(host string) string { return "host_" + host }

// nameRE is what an agent name may be: River's queue names are lower-case
// letters and digits separated by single _ or -.
var nameRE = regexp.MustCompile(`^[a-z0-9]+(?:[_-][a-z0-9]+)*$`)

// ValidName checks an agent name.
func ValidName(name string) error {
	if len(name) > 40 || !nameRE.MatchString(name) {
		return fmt.Errorf("agent name %q is not valid: use up to 40 lower-case letters and digits, separated by single - or _ (e.g. small-1)", name)
	}
	return nil
}

// DefaultName is the agent name a hostname gives: lower case, with every
// run of other characters (dots of a domain) made one -, at most 40
// characters.
func DefaultName(hostname string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(hostname) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	n := strings.Trim(b.String(), "-")
	if len(n) > 40 {
		n = strings.Trim(n[:40], "-")
	}
	if n == "" {
		n = "host"
	}
	return n
}

// Fleet is a connection to the fleet's store: River's jobs and the hosts.
type Fleet struct {
	pool  *pgxpool.Pool
	river *river.Client[pgx.Tx] // inserts, lists, cancels and retries; works nothing
	where string
}

// Open connects to the fleet in the PostgreSQL store at dsn, which the
// store's migrations have brought up to date (store.Open first). where
// names it in messages (without the password).
func Open(ctx context.Context, dsn, where string) (*Fleet, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("the fleet's store %s: %w", where, err)
	}
	// An agent works one job at a time: a few connections serve River's
	// fetches, its leader's maintenance and the heartbeats, so that one
	// PostgreSQL serves many agents (docs/fleet.md).
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("the fleet's store %s: %w", where, err)
	}
	f := &Fleet{pool: pool, where: where}
	if err := f.checkSchema(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	f.river, err = river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: quiet(), SkipUnknownJobCheck: true})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("the fleet's store %s: %w", where, err)
	}
	return f, nil
}

// checkSchema refuses a store whose River schema lacks a migration the
// linked River needs (a store migrated by an older qpslab).
func (f *Fleet) checkSchema(ctx context.Context) error {
	m, err := rivermigrate.New(riverpgxv5.New(f.pool), &rivermigrate.Config{Logger: quiet()})
	if err != nil {
		return fmt.Errorf("the fleet's store %s: %w", f.where, err)
	}
	res, err := m.Validate(ctx, nil)
	if err != nil {
		return fmt.Errorf("the fleet's store %s: River's schema: %w", f.where, err)
	}
	if !res.OK {
		return fmt.Errorf("the fleet's store %s: River's schema is not this qpslab's (%s): open the store once with this qpslab to migrate it", f.where, strings.Join(res.Messages, "; "))
	}
	return nil
}

// quiet is River's logger: its warnings and errors, on standard error.
func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// stderr is where River's own warnings go (a variable for the tests).
var stderr io.Writer = io.Discard

// SetRiverLog sends River's warnings and errors to w (an agent's standard
// error); by default they are dropped.
func SetRiverLog(w io.Writer) { stderr = w }

// Close closes the connections.
func (f *Fleet) Close() { f.pool.Close() }

// Where names the store for messages.
func (f *Fleet) Where() string { return f.where }

// Submit queues jobs, one River job each in its host's queue, in one
// transaction: all or none. attempts is how many times River tries each
// (a retry after a failure or a lost agent is an attempt). It returns the
// jobs' ids, in order.
func (f *Fleet) Submit(ctx context.Context, jobs []Job, attempts int) ([]int64, error) {
	return f.submit(ctx, jobs, attempts, nil)
}

// submit queues jobs in one transaction, in which before, if set, writes
// first.
func (f *Fleet) submit(ctx context.Context, jobs []Job, attempts int, before func(pgx.Tx) error) ([]int64, error) {
	if attempts < 1 {
		return nil, fmt.Errorf("--attempts %d: give 1 or more", attempts)
	}
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		if err := ValidName(j.Host); err != nil {
			return nil, err
		}
		if j.Timeout <= 0 {
			return nil, fmt.Errorf("job for %s: no timeout", j.Host)
		}
		params[i] = river.InsertManyParams{Args: j, InsertOpts: &river.InsertOpts{Queue: Queue(j.Host), MaxAttempts: attempts}}
	}
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("queue the jobs in %s: %w", f.where, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if before != nil {
		if err := before(tx); err != nil {
			return nil, fmt.Errorf("queue the jobs in %s: %w", f.where, err)
		}
	}
	res, err := f.river.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, fmt.Errorf("queue the jobs in %s: %w", f.where, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("queue the jobs in %s: %w", f.where, err)
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	return ids, nil
}

// JobInfo is one job as River keeps it.
type JobInfo struct {
	ID          int64          `json:"id"`
	Job         Job            `json:"job"`
	State       string         `json:"state"` // River's: available, running, retryable, completed, cancelled, discarded, scheduled
	Attempt     int            `json:"attempt"`
	MaxAttempts int            `json:"max_attempts"`
	Errors      []AttemptError `json:"errors"` // one per failed attempt, oldest first
	Created     time.Time      `json:"created"`
	Attempted   *time.Time     `json:"attempted,omitempty"` // the current (or last) attempt's start
	Finalized   *time.Time     `json:"finalized,omitempty"`
	Scheduled   time.Time      `json:"scheduled"`
	AttemptedBy []string       `json:"attempted_by"` // River client ids: agent name/runner
}

// AttemptError is why an attempt did not complete.
type AttemptError struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error"`
}

// Rescued is the error River's rescuer gives an attempt whose agent
// vanished; LastError says it in the fleet's words.
const Rescued = "Stuck job rescued by JobRescuer"

// LastError is why the job's last failed attempt failed ("" for none).
func (j JobInfo) LastError() string {
	if len(j.Errors) == 0 {
		return ""
	}
	e := j.Errors[len(j.Errors)-1]
	if e.Error == Rescued {
		return fmt.Sprintf("attempt %d: its agent was lost mid-job (no heartbeat: killed, or its machine went down); River's rescuer made the job retryable once its timeout had passed", e.Attempt)
	}
	return fmt.Sprintf("attempt %d: %s", e.Attempt, e.Error)
}

func jobInfo(r *rivertype.JobRow) (JobInfo, error) {
	j := JobInfo{ID: r.ID, State: string(r.State), Attempt: r.Attempt, MaxAttempts: r.MaxAttempts, Created: r.CreatedAt,
		Attempted: r.AttemptedAt, Finalized: r.FinalizedAt, Scheduled: r.ScheduledAt, AttemptedBy: r.AttemptedBy}
	if err := json.Unmarshal(r.EncodedArgs, &j.Job); err != nil {
		return j, fmt.Errorf("job %d: its arguments: %w", r.ID, err)
	}
	for _, e := range r.Errors {
		j.Errors = append(j.Errors, AttemptError{At: e.At, Attempt: e.Attempt, Error: e.Error})
	}
	return j, nil
}

// Jobs lists the fleet's jobs, oldest first: those named, or all.
func (f *Fleet) Jobs(ctx context.Context, ids ...int64) ([]JobInfo, error) {
	p := river.NewJobListParams().Kinds(Kind).OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(10000)
	if len(ids) > 0 {
		p = p.IDs(ids...)
	}
	return listJobs(ctx, f, p, "jobs", jobInfo)
}

// listJobs lists the jobs p selects, 10,000 a page, each as conv makes it.
func listJobs[T any](ctx context.Context, f *Fleet, p *river.JobListParams, what string,
	conv func(*rivertype.JobRow) (T, error)) ([]T, error) {
	var out []T
	for {
		res, err := f.river.JobList(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("list the %s in %s: %w", what, f.where, err)
		}
		for _, r := range res.Jobs {
			j, err := conv(r)
			if err != nil {
				return nil, err
			}
			out = append(out, j)
		}
		if len(res.Jobs) < 10000 {
			return out, nil
		}
		p = p.After(res.LastCursor)
	}
}

// Job is one job, or an error naming it when there is none.
func (f *Fleet) Job(ctx context.Context, id int64) (JobInfo, error) {
	js, err := f.Jobs(ctx, id)
	if err != nil {
		return JobInfo{}, err
	}
	if len(js) == 0 {
		return JobInfo{}, fmt.Errorf("no job %d in %s: qpslab fleet status lists them", id, f.where)
	}
	return js[0], nil
}

// finished are the states River never leaves on its own.
func finished(state string) bool {
	return state == string(rivertype.JobStateCompleted) || state == string(rivertype.JobStateCancelled) || state == string(rivertype.JobStateDiscarded)
}

// Cancel cancels a job: one still queued never runs; one running has its
// attempt cancelled by its agent (the run in progress is stored aborted and
// its server stopped), and is not retried. A job whose agent is lost is
// cancelled when River's rescuer comes to it.
func (f *Fleet) Cancel(ctx context.Context, id int64) (JobInfo, error) {
	j, err := f.Job(ctx, id)
	if err != nil {
		return j, err
	}
	if finished(j.State) {
		return j, fmt.Errorf("job %d is %s already: nothing to cancel", id, j.State)
	}
	r, err := f.river.JobCancel(ctx, id)
	if err != nil {
		return j, fmt.Errorf("cancel job %d: %w", id, err)
	}
	return jobInfo(r)
}

// Retry makes a cancelled or discarded job (one that failed every attempt)
// run again, now, as its next attempt (River adds an attempt if it had none
// left); one waiting for its retry is moved up to now. A running or
// completed job is refused: a retry starts the plan again and its earlier
// attempts' runs stop counting, which would throw a completed job's results
// away (submit it again instead).
func (f *Fleet) Retry(ctx context.Context, id int64) (JobInfo, error) {
	j, err := f.Job(ctx, id)
	if err != nil {
		return j, err
	}
	switch j.State {
	case string(rivertype.JobStateRunning):
		return j, fmt.Errorf("job %d is running (attempt %d on %s): cancel it first (qpslab fleet cancel %d)", id, j.Attempt, j.Job.Host, id)
	case string(rivertype.JobStateCompleted):
		return j, fmt.Errorf("job %d completed: a retry would replace its results; submit the plan again to run it again", id)
	case string(rivertype.JobStateAvailable):
		return j, fmt.Errorf("job %d is waiting for its host %s already", id, j.Job.Host)
	}
	r, err := f.river.JobRetry(ctx, id)
	if err != nil {
		return j, fmt.Errorf("retry job %d: %w", id, err)
	}
	return jobInfo(r)
}

// ErrNoHosts is Resolve's error when no agent has registered.
var ErrNoHosts = errors.New("no agent has registered")
