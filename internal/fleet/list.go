package fleet

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/table"
)

// JobRuns are the runs a fleet job stored: counts[attempt][status].
type JobRuns map[int]map[string]int

// HostsTable is qpslab fleet hosts: each host's name, labels, state (lost
// when its heartbeats stopped), the job it works on, its last heartbeat,
// and its machine (host id and fingerprint in short).
func HostsTable(hosts []Host) *table.Table {
	t := table.New("NAME", "LABELS", "STATE", "JOB", "HEARTBEAT", "HOST")
	t.Empty = "no agent has registered: start one on each benchmark host with qpslab agent --store postgres://… --labels …"
	for _, h := range hosts {
		job := "-"
		if h.Job != 0 {
			job = strconv.FormatInt(h.Job, 10)
		}
		labels := strings.Join(h.Labels, ",")
		if labels == "" {
			labels = "-"
		}
		t.Add(h.Name, labels, h.State, job, ago(h.Since)+" ago", machine(h))
	}
	return t
}

// machine is a host's id and what its fingerprint says in short.
func machine(h Host) string {
	var c host.Check
	if err := json.Unmarshal(h.Fingerprint, &c); err != nil {
		return h.HostID + " on " + h.Hostname
	}
	return fmt.Sprintf("%s on %s: %d CPUs, %.1f GB, %s", h.HostID, h.Hostname, c.CPUs, float64(c.MemKB)/1e6, strings.Join(strings.Fields(c.CPUModel), " "))
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.0fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%.0fm", d.Minutes())
	case d < 48*time.Hour:
		return fmt.Sprintf("%.0fh", d.Hours())
	}
	return fmt.Sprintf("%.0fd", d.Hours()/24)
}

func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}

// runsLine is a job's runs in its current attempt ("6 ok, 1 running"),
// with how many earlier attempts' runs stopped counting.
func runsLine(j JobInfo, runs JobRuns) string {
	var parts []string
	cur := runs[j.Attempt]
	for _, st := range []string{result.OK, result.Saturated, result.Failed, result.Aborted, "running"} {
		if n := cur[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	earlier := 0
	for a, m := range runs {
		if a < j.Attempt {
			for _, n := range m {
				earlier += n
			}
		}
	}
	if earlier > 0 {
		parts = append(parts, fmt.Sprintf("%d of earlier attempts", earlier))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// JobsTable is qpslab fleet jobs: one line a job, its id, host, suite and
// builds, River's state, the attempt, when it was queued, started and
// ended, its runs (runs[job id]), and its last error in short.
func JobsTable(jobs []JobInfo, runs map[int64]JobRuns) *table.Table {
	t := table.New("JOB", "HOST", "PLAN", "STATE", "ATTEMPT", "QUEUED", "STARTED", "ENDED", "RUNS", "LAST ERROR")
	t.Empty = "no jobs: queue one with qpslab fleet submit SUITE … --hosts NAME|LABEL"
	for _, j := range jobs {
		e := j.LastError()
		if len(e) > 100 {
			e = e[:100] + "… (qpslab fleet status " + strconv.FormatInt(j.ID, 10) + ")"
		}
		if e == "" {
			e = "-"
		}
		t.Add(strconv.FormatInt(j.ID, 10), j.Job.Host, planLine(j.Job), j.State, fmt.Sprintf("%d/%d", j.Attempt, j.MaxAttempts),
			j.Created.UTC().Format("2006-01-02T15:04:05"), when(j.Attempted), when(j.Finalized), runsLine(j, runs[j.ID]), e)
	}
	return t
}

func planLine(j Job) string {
	s := j.Suite
	if b := j.Params["build"]; b != "" {
		s += " " + b
	}
	return s
}

// WriteJob writes one job in full: its plan's parameters, its state and
// attempts, the runs each attempt stored, and every attempt's error.
func WriteJob(w io.Writer, j JobInfo, runs JobRuns) error {
	fmt.Fprintf(w, "job %d: %s on host %s (batch %s)\n", j.ID, j.Job.Suite, j.Job.Host, j.Job.Batch)
	keys := make([]string, 0, len(j.Job.Params))
	for k := range j.Job.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ps []string
	for _, k := range keys {
		ps = append(ps, "--"+k+" "+j.Job.Params[k])
	}
	fmt.Fprintf(w, "plan: %s\n", strings.Join(ps, " "))
	fmt.Fprintf(w, "state: %s, attempt %d of %d, timeout %s\n", j.State, j.Attempt, j.MaxAttempts, j.Job.TimeoutDuration())
	fmt.Fprintf(w, "queued %s, started %s, ended %s\n", j.Created.UTC().Format("2006-01-02T15:04:05"), when(j.Attempted), when(j.Finalized))
	if len(j.AttemptedBy) > 0 {
		fmt.Fprintf(w, "worked by: %s\n", strings.Join(j.AttemptedBy, ", "))
	}
	attempts := make([]int, 0, len(runs))
	for a := range runs {
		attempts = append(attempts, a)
	}
	sort.Ints(attempts)
	for _, a := range attempts {
		var parts []string
		for _, st := range []string{result.OK, result.Saturated, result.Failed, result.Aborted, "running"} {
			if n := runs[a][st]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, st))
			}
		}
		fmt.Fprintf(w, "runs of attempt %d: %s\n", a, strings.Join(parts, ", "))
	}
	for i, e := range j.Errors {
		x := JobInfo{Errors: j.Errors[i : i+1]}
		fmt.Fprintf(w, "error at %s: %s\n", e.At.UTC().Format("2006-01-02T15:04:05"), x.LastError())
	}
	return nil
}
