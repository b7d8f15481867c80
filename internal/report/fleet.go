package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
)

// JobRuns are the runs a fleet job stored: counts[attempt][status].
type JobRuns map[int]map[string]int

// FleetHosts writes the fleet's hosts: name, labels, state (lost when its
// heartbeats stopped), the job it works on, its last heartbeat, and its
// machine (host id and fingerprint in short).
func FleetHosts(w io.Writer, hosts []fleet.Host) error {
	if len(hosts) == 0 {
		_, err := fmt.Fprintln(w, "no agent has registered: start one on each benchmark host with qpslab agent --store postgres://… --labels …")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLABELS\tSTATE\tJOB\tHEARTBEAT\tHOST")
	for _, h := range hosts {
		job := "-"
		if h.Job != 0 {
			job = strconv.FormatInt(h.Job, 10)
		}
		labels := strings.Join(h.Labels, ",")
		if labels == "" {
			labels = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s ago\t%s\n", h.Name, labels, h.State, job, ago(h.Since), machine(h))
	}
	return tw.Flush()
}

// machine is a host's id and what its fingerprint says in short.
func machine(h fleet.Host) string {
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
func runsLine(j fleet.JobInfo, runs JobRuns) string {
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

// FleetJobs writes the fleet's jobs, one line each: id, host, suite and
// builds, River's state, the attempt, when it was queued, started and
// ended, its runs (runs[job id]), and its last error in short.
func FleetJobs(w io.Writer, jobs []fleet.JobInfo, runs map[int64]JobRuns) error {
	if len(jobs) == 0 {
		_, err := fmt.Fprintln(w, "no jobs: queue one with qpslab fleet submit SUITE … --hosts NAME|LABEL")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tHOST\tPLAN\tSTATE\tATTEMPT\tQUEUED\tSTARTED\tENDED\tRUNS\tLAST ERROR")
	for _, j := range jobs {
		e := j.LastError()
		if len(e) > 100 {
			e = e[:100] + "… (qpslab fleet status " + strconv.FormatInt(j.ID, 10) + ")"
		}
		if e == "" {
			e = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.Job.Host, planLine(j.Job), j.State, j.Attempt, j.MaxAttempts,
			j.Created.UTC().Format("2006-01-02T15:04:05"), when(j.Attempted), when(j.Finalized), runsLine(j, runs[j.ID]), e)
	}
	return tw.Flush()
}

func planLine(j fleet.Job) string {
	s := j.Suite
	if b := j.Params["build"]; b != "" {
		s += " " + b
	}
	return s
}

// FleetJob writes one job in full: its plan's parameters, its state and
// attempts, the runs each attempt stored, and every attempt's error.
func FleetJob(w io.Writer, j fleet.JobInfo, runs JobRuns) error {
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
		x := fleet.JobInfo{Errors: j.Errors[i : i+1]}
		fmt.Fprintf(w, "error at %s: %s\n", e.At.UTC().Format("2006-01-02T15:04:05"), x.LastError())
	}
	return nil
}
