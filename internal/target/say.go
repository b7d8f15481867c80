package target

import (
	"fmt"
	"io"

	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/table"
)

// ListTable lists the registered targets: where each listens, as whom, in
// which database, and where its password is read from (never the
// password).
func ListTable(ts []Target) *table.Table {
	tb := table.New("NAME", "FLAVOR", "WHERE", "USER", "DATABASE", "PASSWORD")
	for _, t := range ts {
		pw := "none"
		switch {
		case t.PasswordEnv != "":
			pw = "$" + t.PasswordEnv
		case t.PasswordFile != "":
			pw = t.PasswordFile
		}
		tb.Add(t.Name, string(t.Flavor), t.Where(), t.User, t.Database, pw)
	}
	return tb
}

// SayAdded tells what was registered.
func SayAdded(w io.Writer, t Target) {
	fmt.Fprintf(w, "added target %s: %s at %s as %s, database %s; check it with qpslab targets check %s\n",
		t.Name, t.Flavor.Describe().Title, t.Where(), t.User, t.Database, t.Name)
}

// WriteCheck tells what Check found, a line per fact.
func WriteCheck(w io.Writer, r Report) {
	t := r.Target
	fmt.Fprintf(w, "target %s: reachable at %s as %s\n", t.Name, t.Where(), t.User)
	fmt.Fprintf(w, "server: %s %s (%s)\n", r.Flavor.Describe().Title, r.Version, r.Full)
	db := "qpslab's own"
	switch {
	case r.Created:
		db = "created now, qpslab's own"
	case r.Claimed:
		db = "was empty, now qpslab's own"
	}
	fmt.Fprintf(w, "database: %s (%s); the user may create tables in it\n", t.Database, db)
	fmt.Fprintf(w, "max_connections: %d (a plan opens at most that many less one)\n", r.MaxConnections)
	for _, m := range r.Missing {
		fmt.Fprintf(w, "privilege missing: %s\n", m)
	}
	if r.Counters == "" {
		fmt.Fprintf(w, "counters: readable\n")
	} else {
		fmt.Fprintf(w, "counters: not readable (%s): runs will lack them\n", r.Counters)
	}
	if r.PID > 0 {
		fmt.Fprintf(w, "host metrics: the server runs on this host (pid %d, in %s): its CPU, context switches and disk per operation are measured\n", r.PID, r.Dir)
	} else {
		fmt.Fprintf(w, "host metrics: the server is not on this host (or not visible from it): its CPU, context switches and IO per operation are not measured; qpslab's own client CPU is\n")
	}
	fmt.Fprintf(w, "runs on it are labelled %s\n", label.Of(r.Label(), Config, ""))
}
