package app

import (
	"context"

	"github.com/qpslab/qpslab/internal/sandbox"
)

// ServerStart starts a sandbox of build with config (qpslab server start):
// detached (spec.Detach), or in the foreground until ctx ends, when it
// stops it.
func ServerStart(ctx context.Context, e Env, build, config string, spec sandbox.Spec) error {
	Clean(e.Home, e.Err)
	foreground := !spec.Detach
	srv, err := sandbox.StartNamed(ctx, e.Home, build, config, spec)
	if err != nil {
		return err
	}
	sandbox.SayStarted(e.Out, srv.State, foreground)
	if !foreground {
		return nil
	}
	<-ctx.Done()
	if err = srv.Stop(); err == nil {
		sandbox.SayStopped(e.Out, srv.Name, true, false)
	}
	return err
}
