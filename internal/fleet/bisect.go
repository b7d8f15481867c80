package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/qpslab/qpslab/internal/build"
)

// BisectKind is the River job kind of a bisection: qpslab bisect's
// question, worked by an agent as the command walks it.
const BisectKind = "qpslab_bisect"

// BisectJob is one bisection for one host: what qpslab bisect takes, as
// River's job arguments (the dashboard's "bisect this" queues it).
type BisectJob struct {
	Good      string            `json:"good"`
	Bad       string            `json:"bad"`
	Src       string            `json:"src"` // the git tree, as the agent's host has it
	Suite     string            `json:"suite"`
	Test      string            `json:"test"`
	Metric    string            `json:"metric,omitempty"`
	Threshold float64           `json:"threshold,omitempty"` // 0: the host's noise floor
	Rounds    int               `json:"rounds,omitempty"`    // paired rounds a measurement (0: qpslab bisect's default)
	Set       map[string]string `json:"set,omitempty"`       // the suite's flags (--set NAME=VALUE)
	// Attention is the key of the attention entry it was queued from
	// ("" for none): the entry shows its progress and answer.
	Attention string `json:"attention,omitempty" river:"unique"`
	// Retries is how many times a step that cannot tell is resumed with
	// twice the rounds before the job ends with that answer.
	Retries int     `json:"retries"`
	Host    string  `json:"host"`
	Timeout float64 `json:"timeout_s"`
	// Who queued it (a token's name, or "public").
	Who string `json:"who,omitempty"`
}

// Kind is the job's River kind.
func (BisectJob) Kind() string { return BisectKind }

// TimeoutDuration is Timeout as a duration.
func (j BisectJob) TimeoutDuration() time.Duration {
	return time.Duration(j.Timeout * float64(time.Second))
}

// ErrBisecting is SubmitBisect's error when the entry is being bisected.
var ErrBisecting = errors.New("the entry is being bisected already")

// BisectInfo is one bisection job as River keeps it.
type BisectInfo struct {
	ID        int64     `json:"id"`
	Job       BisectJob `json:"job"`
	State     string    `json:"state"`
	Attempt   int       `json:"attempt"`
	LastError string    `json:"last_error,omitempty"`
	Created   time.Time `json:"created"`
}

// Finished reports whether River will not run the job again on its own.
func (b BisectInfo) Finished() bool { return finished(b.State) }

// SubmitBisect queues a bisection in its host's queue; River tries it
// attempts times (an agent lost mid-walk: the next attempt resumes the
// stored bisection from its decided steps). One of an attention entry is
// refused while another of the entry is queued or running (River's
// uniqueness by the entry's key: two presses of the button at once queue
// one).
func (f *Fleet) SubmitBisect(ctx context.Context, j BisectJob, attempts int) (int64, error) {
	if err := ValidName(j.Host); err != nil {
		return 0, err
	}
	if j.Timeout <= 0 {
		return 0, fmt.Errorf("bisection job for %s: no timeout", j.Host)
	}
	if attempts < 1 {
		return 0, fmt.Errorf("attempts %d: give 1 or more", attempts)
	}
	opts := &river.InsertOpts{Queue: Queue(j.Host), MaxAttempts: attempts}
	if j.Attention != "" {
		opts.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
			rivertype.JobStateRetryable, rivertype.JobStateScheduled}}
	}
	res, err := f.river.Insert(ctx, j, opts)
	if err != nil {
		return 0, fmt.Errorf("queue the bisection in %s: %w", f.where, err)
	}
	if res.UniqueSkippedAsDuplicate {
		return res.Job.ID, fmt.Errorf("%w: job %d (%s)", ErrBisecting, res.Job.ID, res.Job.State)
	}
	return res.Job.ID, nil
}

// BisectJobs lists the bisection jobs, oldest first.
func (f *Fleet) BisectJobs(ctx context.Context) ([]BisectInfo, error) {
	p := river.NewJobListParams().Kinds(BisectKind).OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(10000)
	return listJobs(ctx, f, p, "bisection jobs", bisectInfo)
}

func bisectInfo(r *rivertype.JobRow) (BisectInfo, error) {
	b := BisectInfo{ID: r.ID, State: string(r.State), Attempt: r.Attempt, Created: r.CreatedAt}
	if err := json.Unmarshal(r.EncodedArgs, &b.Job); err != nil {
		return b, fmt.Errorf("job %d: its arguments: %w", r.ID, err)
	}
	if n := len(r.Errors); n > 0 {
		b.LastError = fmt.Sprintf("attempt %d: %s", r.Errors[n-1].Attempt, r.Errors[n-1].Error)
	}
	return b, nil
}

// Live are the hosts that work jobs now (idle or working), by name.
func Live(hs []Host) []Host {
	var out []Host
	for _, h := range hs {
		if h.State == Idle || h.State == Working {
			out = append(out, h)
		}
	}
	return out
}

// Command is the qpslab bisect command line that asks j's question (what
// to run where there is no fleet to queue it on).
func (j BisectJob) Command() string {
	q := build.ShellQuote
	args := []string{
		"qpslab",
		"bisect",
		q(j.Good),
		q(j.Bad),
		"--src",
		q(j.Src),
		"--suite",
		q(j.Suite),
		"--test",
		q(j.Test),
	}
	if j.Metric != "" {
		args = append(args, "--metric", q(j.Metric))
	}
	if j.Threshold > 0 {
		args = append(args, "--threshold", fmt.Sprintf("%g%%", 100*j.Threshold))
	}
	if j.Rounds > 0 {
		args = append(args, "--rounds", fmt.Sprint(j.Rounds))
	}
	keys := make([]string, 0, len(j.Set))
	for k := range j.Set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		args = append(args, "--set", q(k+"="+j.Set[k]))
	}
	return strings.Join(args, " ")
}
