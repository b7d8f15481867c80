package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// Attempt is one attempt of a job, as an agent's Work gets it.
type Attempt struct {
	ID      int64 // River's job id
	Attempt int   // 1 for the first
	Job     Job
}

// BisectAttempt is one attempt of a bisection job.
type BisectAttempt struct {
	ID      int64
	Attempt int
	Job     BisectJob
}

// Agent works one host's jobs, one at a time.
type Agent struct {
	Fleet *Fleet
	// Host is what the agent registers: its Name, Labels, HostID,
	// Fingerprint, Hostname, Builds and Configs, and its heartbeat
	// Interval (default 10 s).
	Host Host
	// RescueAfter is River's RescueStuckJobsAfter when this agent leads:
	// the least time after an attempt's start before River's rescuer
	// retries it if its agent vanished (the job's timeout is the other
	// bound; default 1 minute).
	RescueAfter time.Duration
	// Work runs one attempt of a job; its context ends when the job is
	// cancelled, times out, or the agent is stopped with abort.
	Work func(ctx context.Context, a Attempt) error
	// Bisect runs one attempt of a bisection job, as Work a plan's (nil:
	// the agent works no bisections, and River leaves them queued).
	Bisect func(ctx context.Context, a BisectAttempt) error
	// Have says what the agent has now (a job may have fetched a build);
	// it is published after each job. nil: what it registered.
	Have func() ([]Build, []Config)
	// Log is told what the agent does.
	Log func(line string)

	runner string
	mu     sync.Mutex // guards state and job
	state  string     // Idle, Working, Stopping, Stopped: moved by move alone
	job    int64
	// wmu makes the writes of the state one at a time, each of the state
	// as it is when its turn comes: they reach the store in the order of
	// the moves, and none carries a state older than the one before.
	wmu sync.Mutex
}

func (a *Agent) logf(format string, args ...any) {
	if a.Log != nil {
		a.Log(fmt.Sprintf(format, args...))
	}
}

// enter moves the agent to state (as move allows: a stopping agent stays
// stopping) with job, in memory.
func (a *Agent) enter(state string, job int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state, a.job = move(a.state, state), job
}

// is reports whether the agent is in state.
func (a *Agent) is(state string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state == state
}

// set moves the agent to state and says so in a heartbeat at once.
func (a *Agent) set(state string, job int64) error {
	a.enter(state, job)
	return a.beat()
}

// beat writes the agent's state and job as they are now, with a heartbeat.
func (a *Agent) beat() error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.mu.Lock()
	state, job := a.state, a.job
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), max(a.Host.Interval, 5*time.Second))
	defer cancel()
	return a.Fleet.beat(ctx, a.Host.Name, a.runner, state, job)
}

// Run registers the host and works its queue until ctx ends (SIGTERM),
// then stops: the job in progress finishes, unless abort is closed (at
// once, or later: a second signal), which cancels it (its run is stored
// aborted, its servers stopped, and River retries it when the agent is
// back). The host is then recorded stopped. A heartbeat that finds another
// agent holding the name ends the agent too. The heartbeat ends before the
// last state is written: no heartbeat in flight can overwrite stopped.
func (a *Agent) Run(ctx context.Context, abort <-chan struct{}) error {
	if err := ValidName(a.Host.Name); err != nil {
		return err
	}
	if a.Work == nil {
		return errors.New("an agent needs its Work")
	}
	if a.Host.Interval <= 0 {
		a.Host.Interval = 10 * time.Second
	}
	if a.RescueAfter <= 0 {
		a.RescueAfter = time.Minute
	}
	b := make([]byte, 4)
	rand.Read(b)
	hn, _ := os.Hostname()
	a.runner = fmt.Sprintf("%s/%d/%s", hn, os.Getpid(), hex.EncodeToString(b))
	if err := a.Fleet.register(ctx, a.Host, a.runner); err != nil {
		return err
	}
	a.state = Idle
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &worker{a: a}); err != nil {
		return err
	}
	if a.Bisect != nil {
		if err := river.AddWorkerSafely(workers, &bisectWorker{a: a}); err != nil {
			return err
		}
	}
	client, err := river.NewClient(riverpgxv5.New(a.Fleet.pool), &river.Config{
		ID:      a.Host.Name + "/" + a.runner,
		Queues:  map[string]river.QueueConfig{Queue(a.Host.Name): {MaxWorkers: 1}}, // one job at a time: a benchmark host is alone with its benchmark
		Workers: workers,
		// Each job's own timeout (Job.Timeout, the worker's Timeout)
		// bounds it; there is no other.
		JobTimeout:           -1,
		RescueStuckJobsAfter: a.RescueAfter,
		// The jobs are the fleet's history (fleet status): kept.
		CompletedJobRetentionPeriod: -1,
		CancelledJobRetentionPeriod: -1,
		DiscardedJobRetentionPeriod: -1,
		Logger:                      quiet(),
	})
	if err != nil {
		a.stopped()
		return fmt.Errorf("agent %s: %w", a.Host.Name, err)
	}
	// River's context is not the signal's: a SIGTERM stops the agent as
	// configured below, not by cancelling the job in progress.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		a.stopped()
		return fmt.Errorf("agent %s: start working %s: %w", a.Host.Name, Queue(a.Host.Name), err)
	}
	a.logf("agent %s: registered in %s (host %s, labels %v); works queue %s one job at a time; heartbeat every %s", a.Host.Name, a.Fleet.where,
		a.Host.HostID, a.Host.Labels, Queue(a.Host.Name), a.Host.Interval)
	fatal := make(chan error, 1)
	done := make(chan struct{})    // closed: the heartbeat ends
	beating := make(chan struct{}) // closed when it has
	go func() {
		defer close(beating)
		t := time.NewTicker(a.Host.Interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if err := a.beat(); errors.Is(err, errTaken) {
				fatal <- err
				return
			} else if err != nil {
				a.logf("agent %s: %v", a.Host.Name, err) // the next one may get through; lost after three
			}
		}
	}()
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-fatal:
		a.logf("agent %s: %v: stopping", a.Host.Name, runErr)
		abort = closed()
	}
	a.mu.Lock()
	working := a.state == Working
	a.state = move(a.state, Stopping) // with its job, if it works on one
	a.mu.Unlock()
	if runErr == nil {
		if err := a.beat(); err != nil {
			a.logf("agent %s: %v", a.Host.Name, err)
		}
	}
	stopCtx, cancelStop := context.WithCancel(context.Background())
	defer cancelStop()
	stopErr := make(chan error, 1)
	go func() { stopErr <- client.Stop(stopCtx) }()
	select {
	case err := <-stopErr:
		if err != nil && runErr == nil {
			runErr = err
		}
	default:
		if working {
			a.logf("agent %s: stopping after job %d ends (a second SIGTERM or SIGINT aborts it)", a.Host.Name, a.currentJob())
		}
		select {
		case err := <-stopErr:
			if err != nil && runErr == nil {
				runErr = err
			}
		case <-abort:
			a.logf("agent %s: aborting job %d", a.Host.Name, a.currentJob())
			cancelStop()
			<-stopErr
			if err := client.StopAndCancel(context.Background()); err != nil && runErr == nil {
				runErr = err
			}
		}
	}
	close(done)
	<-beating // a heartbeat in flight ends before the last state is written
	if !errors.Is(runErr, errTaken) {
		a.stopped()
	}
	a.logf("agent %s: stopped", a.Host.Name)
	return runErr
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func (a *Agent) currentJob() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.job
}

// stopped records the host stopped: a clean end, not a loss. It is the
// agent's last write: nothing moves it out of stopped but a registration.
func (a *Agent) stopped() {
	if err := a.set(Stopped, 0); err != nil {
		a.logf("agent %s: %v", a.Host.Name, err)
	}
}

// permanent is an error no retry can mend on this host.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// Permanent marks err as one that no retry of the job can mend on this
// host (its plan does not parse here, it names a build this host cannot
// get): the job is cancelled at once, with err, rather than retried. A
// fleet retry runs it again once the host is fixed.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// worker is River's worker of plan jobs on one agent.
type worker struct {
	river.WorkerDefaults[Job]
	a *Agent
}

// Timeout is the job's own: past it the attempt is cancelled, and River's
// rescuer leaves a running job alone until it has passed.
func (w *worker) Timeout(j *river.Job[Job]) time.Duration { return j.Args.TimeoutDuration() }

func (w *worker) Work(ctx context.Context, j *river.Job[Job]) error {
	run := func(ctx context.Context) error {
		return w.a.Work(ctx, Attempt{ID: j.ID, Attempt: j.Attempt, Job: j.Args})
	}
	return w.a.work(ctx, j.JobRow, j.Args, run)
}

// bisectWorker is River's worker of bisection jobs on one agent.
type bisectWorker struct {
	river.WorkerDefaults[BisectJob]
	a *Agent
}

// Timeout is the job's own, as a plan job's.
func (w *bisectWorker) Timeout(j *river.Job[BisectJob]) time.Duration {
	return j.Args.TimeoutDuration()
}

func (w *bisectWorker) Work(ctx context.Context, j *river.Job[BisectJob]) error {
	return w.a.work(ctx, j.JobRow, j.Args, func(ctx context.Context) error {
		return w.a.Bisect(ctx, BisectAttempt{ID: j.ID, Attempt: j.Attempt, Job: j.Args})
	})
}

func short(hash string) string { return hash[:min(len(hash), 8)] }

// queued is what an agent's work needs of a job of any kind: the host
// whose queue it is in, what it does (for the log) and its timeout.
type queued interface {
	queuedOn() string
	what() string
	TimeoutDuration() time.Duration
}

func (j Job) queuedOn() string { return j.Host }
func (j Job) what() string     { return j.Suite }

func (j BisectJob) queuedOn() string { return j.Host }
func (j BisectJob) what() string {
	return fmt.Sprintf("bisect %s..%s (%s %s)", short(j.Good), short(j.Bad), j.Suite, j.Test)
}

// work runs one attempt of job j (args: its arguments) with run: the
// agent is working meanwhile, and what it has is published after.
func (a *Agent) work(ctx context.Context, j *rivertype.JobRow, args queued, run func(context.Context) error) error {
	host, what, timeout := args.queuedOn(), args.what(), args.TimeoutDuration()
	if host != a.Host.Name { // only its queue's jobs reach an agent
		return river.JobCancel(fmt.Errorf("job %d is for host %s, not %s", j.ID, host, a.Host.Name))
	}
	if err := a.set(Working, j.ID); err != nil {
		a.logf("agent %s: %v", a.Host.Name, err)
	}
	a.logf("job %d, attempt %d of %d: %s on %s (timeout %s)", j.ID, j.Attempt, j.MaxAttempts, what, a.Host.Name,
		timeout)
	err := run(ctx)
	if err != nil && ctx.Err() != nil {
		stopping := a.is(Stopping)
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, river.ErrJobCancelledRemotely):
			err = fmt.Errorf("cancelled (qpslab fleet cancel): %w", err)
		case errors.Is(cause, context.DeadlineExceeded):
			err = fmt.Errorf("timed out: the attempt ran past the job's timeout of %s: %w", timeout, err)
		case stopping:
			// River puts a job its client stopped under back in the
			// queue as it was (the attempt not counted, no error kept).
			a.logf("job %d, attempt %d: interrupted (%v): the agent stops; River puts the job back in its queue, to run again when the agent is back", j.ID, j.Attempt, err)
			_ = a.set(Stopping, 0)
			return fmt.Errorf("its agent was stopped mid-job: %w", err)
		}
	}
	if a.Have != nil {
		builds, configs := a.Have()
		pctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if perr := a.Fleet.publish(pctx, a.Host.Name, a.runner, builds, configs); perr != nil {
			a.logf("agent %s: %v", a.Host.Name, perr)
		}
		cancel()
	}
	if serr := a.set(Idle, 0); serr != nil {
		a.logf("agent %s: %v", a.Host.Name, serr)
	}
	var p permanent
	switch {
	case errors.As(err, &p):
		a.logf("job %d, attempt %d: failed, and no retry on this host can mend it: %v", j.ID, j.Attempt, err)
		return river.JobCancel(fmt.Errorf("not retried (this host cannot run it as it is): %w", err))
	case err != nil:
		a.logf("job %d, attempt %d: failed: %v", j.ID, j.Attempt, err)
	default:
		a.logf("job %d, attempt %d: done", j.ID, j.Attempt)
	}
	return err
}
