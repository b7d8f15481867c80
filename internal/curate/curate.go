// Package curate owns taking stored runs out of view and back: hiding,
// unhiding and deleting them by id, each with an audit line of who did it
// and when, for the command (qpslab runs hide|unhide|delete) and the API
// (POST /api/v1/runs/{id}/hide, /unhide, DELETE /api/v1/runs/{id}) alike.
// The store keeps the audit and leaves hidden runs out of every read
// (store.Curate); this package names who acted and says what was done. It
// judges no run and reads no figure.
package curate

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/store"
)

// Actions are what can be done to a run, in the order the command lists
// them, with what each does.
var Actions = []struct{ Name, Short string }{
	{store.Hide, "Hide stored runs from every read (labels, compare, history, detect, export, the dashboard and its API), keeping them"},
	{store.Unhide, "Show hidden runs again"},
	{store.Delete, "Delete stored runs with their samples, metrics, stacks and rounds"},
}

// Apply does act (its Action, by its Who at its At: an audit line but for
// the run) to the runs ids (each once, in the order given): all of them,
// or for an id no run has none (a *store.NoRunError that names it).
func Apply(ctx context.Context, st *store.Store, act store.Audit, ids []string) ([]store.Audit, error) {
	action := act.Action
	if !slices.ContainsFunc(Actions, func(a struct{ Name, Short string }) bool { return a.Name == action }) {
		return nil, fmt.Errorf("%q: a run can be hidden, unhidden or deleted", action)
	}
	var once []string
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" {
			return nil, fmt.Errorf("give the id of each run to %s, (/runs/ID on the dashboard)", action)
		}
		if !slices.Contains(once, id) {
			once = append(once, id)
		}
	}
	if len(once) == 0 {
		return nil, fmt.Errorf("give the id of each run to %s, (/runs/ID on the dashboard)", action)
	}
	return st.Curate(ctx, action, once, act.Who, act.At)
}

// Line is an audit line as the command confirms it and the server logs
// it: "hid run ID (LABEL TEST, 4 threads) by WHO at TIME".
func Line(a store.Audit) string {
	did := map[string]string{store.Hide: "hid", store.Unhide: "unhid", store.Delete: "deleted"}[a.Action]
	return fmt.Sprintf("%s run %s (%s %s, %d thread(s)) by %s at %s", did, a.RunID, a.Label, a.Test, a.Threads, a.Who, a.At.UTC().Format(time.RFC3339))
}

// Token is who acted through the API: the token's id and name.
func Token(id, name string) string { return fmt.Sprintf("token %s (%s)", id, name) }

// CLI is who acted from the command line: "cli" and the OS user.
func CLI() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	return "cli " + name
}

// Command is qpslab runs ACTION ID...: Apply as the OS user, one line on
// w per run.
func Command(ctx context.Context, st *store.Store, action string, ids []string, w io.Writer) error {
	done, err := Apply(ctx, st, store.Audit{Action: action, Who: CLI(), At: time.Now()}, ids)
	if err != nil {
		return err
	}
	for _, a := range done {
		fmt.Fprintln(w, Line(a))
	}
	return nil
}
