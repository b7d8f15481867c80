// Package jobs runs plans for the commands that run them: qpslab run (the
// plan with its progress, tables, comparison and reports, an A/A run's
// noise floor), qpslab bisect's steps (internal/bisect runs them on this
// runner: Env.ForBisect), a fleet agent's jobs, fleet submit's checks and queueing,
// the fleet's status, and the demo. It owns the orchestration around a
// plan (the host fingerprint, the store and file it records to, what is
// printed); the plan itself runs in internal/plan, the fleet's queue in
// internal/fleet. It reads no flags and no globals: the store DSN and the
// writers come in an Env.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/store"
)

// Env is what every job is given: the home, the store's DSN (--store;
// "" for the home's SQLite file) and where to print.
type Env struct {
	Home     home.Home
	Store    string
	Out, Err io.Writer
}

// openStore opens the env's store, creating it.
func (e Env) openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, e.Store, e.Home.StoreFile())
	return st, e.damaged(err)
}

// Clean cleans what an earlier qpslab left in the home's sandboxes when it
// died without cleaning up (sandbox.Recover), and says in one line what it
// cleaned. Commands that touch sandboxes call it first; what it cannot
// clean is reported and does not stop the command.
func Clean(h home.Home, errw io.Writer) {
	cleaned, err := sandbox.Recover(h)
	sandbox.SayCleaned(errw, cleaned)
	if err != nil {
		fmt.Fprintf(errw, "qpslab: %s\n", oneLine(err.Error()))
	}
	// The partial files of a write that a kill or a power loss cut, and
	// the folders of a post a killed serve was unpacking (atomicfile's, of
	// a writer that is gone).
	dirs := []string{h.Results(), h.Configs(), h.Builds(), filepath.Dir(h.TuneState()), h.Ingest()}
	if ents, err := os.ReadDir(h.Sandboxes()); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(h.Sandboxes(), e.Name()))
			}
		}
	}
	for _, d := range dirs {
		if _, err := atomicfile.Sweep(d); err != nil {
			fmt.Fprintf(errw, "qpslab: remove what a killed write left in %s: %s\n", d, oneLine(err.Error()))
		}
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// openFleet opens the shared PostgreSQL store (migrating it: River's
// schema is among its migrations) and the fleet in it.
func (e Env) openFleet(ctx context.Context) (*store.Store, *fleet.Fleet, error) {
	if !strings.HasPrefix(e.Store, "postgres://") && !strings.HasPrefix(e.Store, "postgresql://") {
		return nil, nil, fmt.Errorf("the fleet lives in a shared PostgreSQL store: give --store postgres://user@host/db (or $QPSLAB_STORE) on every host and where jobs are submitted")
	}
	st, err := e.openStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	fl, err := fleet.Open(ctx, e.Store, st.Where())
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, fl, nil
}
