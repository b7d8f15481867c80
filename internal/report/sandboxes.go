package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"

	"github.com/qpslab/qpslab/internal/sandbox"
)

// Sandboxes writes the table of qpslab server status: each sandbox's
// build, version, config and state, with the pid, port and socket of a
// running one; then, for each that failed or died, a line saying why.
func Sandboxes(w io.Writer, sts []sandbox.State) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBUILD\tVERSION\tCONFIG\tSTATE\tPID\tPORT\tSOCKET")
	var why []string
	for _, st := range sts {
		state, pid, port, sock := st.Status(), "-", "-", "-"
		if state == "running" {
			pid, port, sock = fmt.Sprint(st.PID), fmt.Sprint(st.Endpoint.Port), st.Endpoint.Socket
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Name, st.Build, st.Version, st.Config, state, pid, port, sock)
		switch state {
		case "failed":
			why = append(why, st.Name+" failed: "+st.Failed)
		case "died":
			why = append(why, st.Name+" died: "+st.Died)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range why {
		fmt.Fprintln(w, l)
	}
	return nil
}

// Started says that a sandbox's server answers: its build, config, pid,
// socket, port and log; in the foreground, also what stops it.
func Started(w io.Writer, st sandbox.State, foreground bool) {
	fmt.Fprintf(w, "started %s: %s %s with config %s, pid %d, socket %s, port %d, log %s\n",
		st.Name, st.Flavor, st.Version, st.Config, st.PID, st.Endpoint.Socket, st.Endpoint.Port, st.Log)
	if foreground {
		fmt.Fprintln(w, "running in the foreground: SIGINT or SIGTERM stops it")
	}
}

// Stopped says that sandbox name's server was stopped, or that it was not
// running; with all (qpslab server stop --all) a sandbox that was not
// running goes unmentioned.
func Stopped(w io.Writer, name string, wasRunning, all bool) {
	switch {
	case wasRunning:
		fmt.Fprintf(w, "stopped %s\n", name)
	case !all:
		fmt.Fprintf(w, "%s was not running\n", name)
	}
}

// Cleaned says in one line what qpslab cleaned after an earlier qpslab
// that died (sandbox.Recover); nothing when it cleaned nothing.
func Cleaned(w io.Writer, cleaned []sandbox.Cleaned) {
	if len(cleaned) == 0 {
		return
	}
	parts := make([]string, len(cleaned))
	for i, c := range cleaned {
		parts[i] = c.Sandbox + ": " + c.What
	}
	fmt.Fprintf(w, "qpslab: cleaned up after an earlier qpslab that died: %s\n", strings.Join(parts, "; "))
}

// Pruned writes what qpslab server prune removed (dryRun: would remove),
// each sandbox with its state and size, where its logs were kept and what
// was left on purpose; then what it kept and why, and the space freed.
func Pruned(w io.Writer, removed []sandbox.Pruned, kept []sandbox.Kept, dryRun bool) {
	verb, freed := "removed", "freed"
	if dryRun {
		verb, freed = "would remove", "would free"
	}
	var total int64
	for _, p := range removed {
		total += p.Bytes
		line := fmt.Sprintf("%s %s (%s): %s", verb, p.Name, p.Status, humanize.Bytes(uint64(max(p.Bytes, 0))))
		if p.Logs != "" {
			line += ", logs kept in " + p.Logs
		}
		if p.Note != "" {
			line += "; " + p.Note
		}
		fmt.Fprintln(w, line)
	}
	for _, k := range kept {
		fmt.Fprintf(w, "kept %s: %s\n", k.Name, k.Why)
	}
	fmt.Fprintf(w, "%s %s in %d sandbox(es)\n", freed, humanize.Bytes(uint64(max(total, 0))), len(removed))
}

// Rows writes what qpslab server sql prints: the column names, then each
// row, tab-separated.
func Rows(w io.Writer, cols []string, rows [][]string) error {
	if len(cols) > 0 {
		if _, err := fmt.Fprintln(w, strings.Join(cols, "\t")); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if _, err := fmt.Fprintln(w, strings.Join(r, "\t")); err != nil {
			return err
		}
	}
	return nil
}
