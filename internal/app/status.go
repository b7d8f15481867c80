package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/store"
)

// Status prints the fleet's hosts and jobs, or the jobs named (args: their
// ids) in full, in format text or json.
func Status(ctx context.Context, e Env, args []string, format string) error {
	return withFleet(ctx, e, args, func(f fleetStore, ids []int64) error {
		return f.status(ctx, e.Out, ids, format)
	})
}

// fleetStore is the fleet's shared store open: its runs (st) and its
// hosts and jobs (fl).
type fleetStore struct {
	st *store.Store
	fl *fleet.Fleet
}

// status writes on w the fleet's hosts and jobs, or the jobs ids in full.
func (f fleetStore) status(ctx context.Context, w io.Writer, ids []int64, format string) error {
	st, fl := f.st, f.fl
	hosts, err := fl.Hosts(ctx)
	if err != nil {
		return err
	}
	jobs, err := fl.Jobs(ctx, ids...)
	if err != nil {
		return err
	}
	if len(ids) > 0 && len(jobs) < len(ids) {
		return fmt.Errorf("no job %s in %s: qpslab fleet status lists them", missingIDs(ids, jobs), fl.Where())
	}
	var keys []string
	for _, j := range jobs {
		keys = append(keys, strconv.FormatInt(j.ID, 10))
	}
	counts, err := st.JobRuns(ctx, keys)
	if err != nil {
		return err
	}
	runs := map[int64]fleet.JobRuns{}
	for _, j := range jobs {
		runs[j.ID] = counts[strconv.FormatInt(j.ID, 10)]
	}
	if format == "json" {
		type jobJSON struct {
			fleet.JobInfo
			Runs      fleet.JobRuns `json:"runs"`
			LastError string        `json:"last_error"`
		}
		out := struct {
			Hosts []fleet.Host `json:"hosts"`
			Jobs  []jobJSON    `json:"jobs"`
		}{Hosts: hosts}
		for _, j := range jobs {
			out.Jobs = append(out.Jobs, jobJSON{j, runs[j.ID], j.LastError()})
		}
		return report.JSON(w, out)
	}
	if len(ids) > 0 {
		for i, j := range jobs {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if err := fleet.WriteJob(w, j, runs[j.ID]); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(w, "hosts in %s\n", fl.Where())
	if err := report.Print(w, fleet.HostsTable(hosts), "text"); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return report.Print(w, fleet.JobsTable(jobs, runs), "text")
}

// Hosts prints the hosts whose agents registered, in format text or json.
func Hosts(ctx context.Context, e Env, format string) error {
	return withFleet(ctx, e, nil, func(f fleetStore, _ []int64) error {
		hosts, err := f.fl.Hosts(ctx)
		if err != nil {
			return err
		}
		if format == "json" {
			return report.JSON(e.Out, hosts)
		}
		return report.Print(e.Out, fleet.HostsTable(hosts), "text")
	})
}

// Cancel cancels the jobs named: a queued one never runs, a running one
// is stopped by its agent and not retried.
func Cancel(ctx context.Context, e Env, args []string) error {
	return eachJob(ctx, e, args, func(fl *fleet.Fleet, id int64) (string, error) {
		j, err := fl.Cancel(ctx, id)
		if err != nil {
			return "", err
		}
		if j.State == "running" {
			return fmt.Sprintf("job %d: cancelling: its agent %s stops it (its run in progress is stored aborted)", id, j.Job.Host), nil
		}
		return fmt.Sprintf("job %d: %s", id, j.State), nil
	})
}

// Retry makes the jobs named available again, now, as their next attempt.
func Retry(ctx context.Context, e Env, args []string) error {
	return eachJob(ctx, e, args, func(fl *fleet.Fleet, id int64) (string, error) {
		j, err := fl.Retry(ctx, id)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("job %d: %s for host %s (attempt %d of %d next)", id, j.State, j.Job.Host, j.Attempt+1, j.MaxAttempts), nil
	})
}

// eachJob does f to each job named, saying what became of each; the first
// failure is the command's error, after the rest were done.
func eachJob(ctx context.Context, e Env, args []string, f func(*fleet.Fleet, int64) (string, error)) error {
	return withFleet(ctx, e, args, func(fs fleetStore, ids []int64) error {
		var errs []error
		for _, id := range ids {
			line, err := f(fs.fl, id)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			fmt.Fprintln(e.Out, line)
		}
		return errors.Join(errs...)
	})
}

// withFleet reads the job ids in args and calls f with them and the
// shared store and its fleet open.
func withFleet(ctx context.Context, e Env, args []string, f func(fleetStore, []int64) error) error {
	ids, err := parseJobIDs(args)
	if err != nil {
		return err
	}
	st, fl, err := e.openFleet(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer fl.Close()
	return f(fleetStore{st, fl}, ids)
}

// parseJobIDs reads job ids from the command line.
func parseJobIDs(args []string) ([]int64, error) {
	var ids []int64
	for _, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("%q is not a job id: qpslab fleet status lists them", a)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func missingIDs(ids []int64, jobs []fleet.JobInfo) string {
	var out []string
	for _, id := range ids {
		if !slices.ContainsFunc(jobs, func(j fleet.JobInfo) bool { return j.ID == id }) {
			out = append(out, strconv.FormatInt(id, 10))
		}
	}
	return strings.Join(out, ", ")
}
