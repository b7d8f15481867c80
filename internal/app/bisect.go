package app

import (
	"context"
	"io"

	"github.com/qpslab/qpslab/internal/bisect"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/result"
)

// ForBisect is the env as qpslab bisect's commands and a fleet agent's
// bisection jobs (internal/bisect) run in: its home, writers and store,
// and this package's runner of plans, by which each step's plan runs as
// qpslab run's does (its output to Err only).
func (e Env) ForBisect() bisect.Env {
	return bisect.Env{
		Home: e.Home, Out: e.Out, Err: e.Err,
		OpenStore: e.openStore,
		WithStore: e.WithStore,
		Clean:     func() { Clean(e.Home, e.Err) },
		RunPlan: func(ctx context.Context, p *plan.Runner, out string,
			more func(context.Context, []result.Run, int) ([]string, error)) ([]result.Run, error) {
			return runPlan(ctx, Env{Home: e.Home, Store: e.Store, Out: io.Discard, Err: e.Err}, p, planRun{out: out, more: more})
		},
	}
}
