package sandbox

import (
	"fmt"
	"io"
	"strings"

	"github.com/dustin/go-humanize"
)

// SayStarted says that a sandbox's server answers: its build, config, pid,
// socket, port and log; in the foreground, also what stops it.
func SayStarted(w io.Writer, st State, foreground bool) {
	fmt.Fprintf(w, "started %s: %s %s with config %s, pid %d, socket %s, port %d, log %s\n",
		st.Name, st.Flavor, st.Version, st.Config, st.PID, st.Endpoint.Socket, st.Endpoint.Port, st.Log)
	if foreground {
		fmt.Fprintln(w, "running in the foreground: SIGINT or SIGTERM stops it")
	}
}

// SayStopped says that sandbox name's server was stopped, or that it was not
// running; with all (qpslab server stop --all) a sandbox that was not
// running goes unmentioned.
func SayStopped(w io.Writer, name string, wasRunning, all bool) {
	switch {
	case wasRunning:
		fmt.Fprintf(w, "stopped %s\n", name)
	case !all:
		fmt.Fprintf(w, "%s was not running\n", name)
	}
}

// SayCleaned says in one line what qpslab cleaned after an earlier qpslab
// that died (sandbox.Recover); nothing when it cleaned nothing.
func SayCleaned(w io.Writer, cleaned []Cleaned) {
	if len(cleaned) == 0 {
		return
	}
	parts := make([]string, len(cleaned))
	for i, c := range cleaned {
		parts[i] = c.Sandbox + ": " + c.What
	}
	fmt.Fprintf(w, "qpslab: cleaned up after an earlier qpslab that died: %s\n", strings.Join(parts, "; "))
}

// SayPruned writes what qpslab server prune removed (dryRun: would remove),
// each sandbox with its state and size, where its logs were kept and what
// was left on purpose; then what it kept and why, and the space freed.
func SayPruned(w io.Writer, removed []Pruned, kept []Kept, dryRun bool) {
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

// WriteRows writes what qpslab server sql prints: the column names, then each
// row, tab-separated.
func WriteRows(w io.Writer, cols []string, rows [][]string) error {
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
