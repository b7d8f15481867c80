package bisect

import (
	"context"
	"fmt"

	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/store"
)

// RunJob runs one attempt of a fleet bisection job on this agent:
// qpslab bisect GOOD BAD --src … with the job's question, through the
// code the command uses (a later attempt resumes the stored bisection
// from its decided steps). A step that cannot tell is resumed with twice
// the rounds, up to the job's Retries times, as its answer says to; the
// job ends when the bisection has its answer (found, no regression, or
// still cannot tell), and fails, not retried, when the bisection failed
// (GOOD or BAD does not build) or its question is refused here.
func RunJob(ctx context.Context, e Env, at fleet.BisectAttempt, builder Builder) error {
	j := at.Job
	id, err := bisectRun(ctx, e, jobOptions(j, builder))
	if id == 0 {
		if err != nil && ctx.Err() == nil {
			return fleet.Permanent(err)
		}
		return err
	}
	for retry := 0; ; retry++ {
		b, err2 := stored(ctx, e, id)
		if err2 != nil {
			return err2
		}
		switch b.State {
		case store.BisectFound, store.BisectNoRegression:
			return nil
		case store.BisectFailed:
			return fleet.Permanent(fmt.Errorf("bisection %d failed: %s", id, b.Result))
		case store.BisectCannotTell:
			if retry >= j.Retries {
				fmt.Fprintf(
					e.Err,
					"bisection %d: %s (after %d retr%s)\n",
					id,
					b.Result,
					retry,
					map[bool]string{true: "y", false: "ies"}[retry == 1],
				)
				return nil
			}
			rounds := optionsOf(b).Rounds
			if rounds <= 0 {
				rounds = DefaultRounds
			}
			fmt.Fprintf(
				e.Err,
				"bisection %d: cannot tell: retry %d of %d with %d round(s)\n",
				id,
				retry+1,
				j.Retries,
				2*rounds,
			)
			err = Resume(ctx, e, id, 2*rounds, builder)
			continue
		}
		if err == nil { // still running, with no error: it cannot be
			err = fmt.Errorf("bisection %d is %s", id, b.State)
		}
		return err
	}
}

func stored(ctx context.Context, e Env, id int64) (store.Bisection, error) {
	st, err := e.OpenStore(ctx)
	if err != nil {
		return store.Bisection{}, err
	}
	defer st.Close()
	b, _, err := st.Bisection(ctx, id)
	return b, err
}

// jobOptions are the options of fleet bisection job j: its question, as
// qpslab bisect takes it.
func jobOptions(j fleet.BisectJob, builder Builder) Options {
	return Options{
		Good:      j.Good,
		Bad:       j.Bad,
		Src:       j.Src,
		Suite:     j.Suite,
		Test:      j.Test,
		Metric:    j.Metric,
		Threshold: j.Threshold,
		Rounds:    j.Rounds,
		Set:       j.Set,
		Attention: j.Attention,
		Builder:   builder,
	}
}
