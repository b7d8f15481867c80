package app

import (
	"context"
	"fmt"

	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/target"
)

// TargetAdd registers a server qpslab did not start (qpslab targets add).
func TargetAdd(e Env, s target.Spec, replace bool) error {
	t, err := target.New(s)
	if err != nil {
		return err
	}
	if err := target.Add(e.Home, t, replace); err != nil {
		return err
	}
	target.SayAdded(e.Out, t)
	return nil
}

// TargetList lists the registered targets (qpslab targets list).
func TargetList(e Env) error {
	ts, err := target.List(e.Home)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		fmt.Fprintln(e.Err, "no targets: register one with qpslab targets add NAME --flavor F --host H")
	}
	return report.Print(e.Out, target.ListTable(ts), "text")
}

// TargetCheck connects to a target and says what it found (qpslab targets
// check): reachable, version and flavor, qpslab's database, privileges.
func TargetCheck(ctx context.Context, e Env, name string) error {
	t, err := target.Get(e.Home, name)
	if err != nil {
		return err
	}
	r, err := target.Check(ctx, t)
	if err != nil {
		return err
	}
	target.WriteCheck(e.Out, r)
	return nil
}

// TargetRemove forgets a target; its server is not touched.
func TargetRemove(e Env, name string) error {
	t, err := target.Remove(e.Home, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "removed target %s; its server is untouched, and qpslab's database %s there stays with its tables\n", name, t.Database)
	return nil
}
