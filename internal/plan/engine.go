package plan

import (
	"context"
	"fmt"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/owned"
	"github.com/qpslab/qpslab/internal/sandbox"
)

// storageEngineCheck says, before anything runs on the server st of build b and
// config cfg, when it lacks a storage engine the plan runs b with: every
// engine, not only the session's, so that the first session of a build and
// config finds a missing one before the load of the engines before it.
func (p *Runner) storageEngineCheck(ctx context.Context, st sandbox.State, b build.Build, cfg config.Config) error {
	if !b.Flavor.Describe().StorageEngines {
		return nil
	}
	conn, err := client.Dial(ctx, st.Endpoint, client.Options{Transport: client.Blocking})
	if err != nil {
		return fmt.Errorf("check the storage engines of %s: connect: %w", b.Name, err)
	}
	defer conn.Close()
	for _, e := range p.storageEnginesOf(b) {
		if err := owned.CheckStorageEngine(ctx, conn, e); err != nil {
			return fmt.Errorf("build %s with config %s: %w", b.Name, configID(cfg), err)
		}
	}
	return nil
}

// checkStorageEngines checks, before the first run, that every build and config
// of the plan has the storage engines it asks for besides InnoDB, so that
// a build without MyRocks ends the plan before anything was measured
// rather than after the builds before it ran. The first build and config
// is checked by its own first session (engineCheck); each other one is
// started once for the check. A plan of InnoDB alone, or on a --sandbox,
// starts nothing more.
func (p *Runner) checkStorageEngines(ctx context.Context, h home.Home, items []Item) error {
	other := false
	for _, e := range p.StorageEngines {
		other = other || label.OtherStorageEngine(e) != ""
	}
	if !other || p.external() || len(items) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for i, it := range items {
		key := it.Build.Name + "\x00" + it.Config.Name
		if seen[key] || !it.Build.Flavor.Describe().StorageEngines {
			continue
		}
		seen[key] = true
		if i == 0 {
			continue
		}
		p.logf("checking that %s with config %s has the storage engines asked for", it.Build.Name, configID(it.Config))
		srv, err := sandbox.Start(ctx, h, sandbox.Spec{Build: it.Build, Config: it.Config, AllowFiles: p.ServerFiles})
		if err != nil {
			return err
		}
		err = p.storageEngineCheck(ctx, srv.State, it.Build, it.Config)
		if serr := srv.Stop(); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
