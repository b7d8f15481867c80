package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
)

// StartNamed starts the home's build named buildName with its config named
// configName (of the build's family) as spec says (qpslab server start).
func StartNamed(ctx context.Context, h home.Home, buildName, configName string, spec Spec) (*Server, error) {
	b, err := build.Registry{Dir: h.Builds(), Cache: h.Cache}.Get(ctx, buildName)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Store{Dir: h.Configs()}.Get(configName, config.Family(b.Flavor.Describe().Family))
	if err != nil {
		return nil, err
	}
	spec.Build, spec.Config = b, cfg
	return Start(ctx, h, spec)
}

// StopNamed stops the sandboxes named, or with all every one of the home's
// (qpslab server stop), calling stopped with each one's name and whether
// it was running.
func StopNamed(h home.Home, names []string, all bool, timeout time.Duration, stopped func(name string, was bool)) error {
	if all == (len(names) > 0) {
		return errors.New("name the sandboxes to stop, or pass --all")
	}
	sts, err := States(h, names...) // none named: --all
	if err != nil {
		return err
	}
	// One that cannot be stopped does not keep the others running.
	var errs []error
	for _, st := range sts {
		was, err := StopByName(h, st.Name, timeout)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		stopped(st.Name, was)
	}
	return errors.Join(errs...)
}

// Query runs one SQL statement on running sandbox name (qpslab server sql)
// and returns its columns and rows as text.
func Query(ctx context.Context, h home.Home, name string, tcp bool, q string) ([]string, [][]string, error) {
	st, err := Running(h, name)
	if err != nil {
		return nil, nil, err
	}
	cols, rows, err := client.Query(ctx, st.Endpoint, tcp, q)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", st.Name, err)
	}
	return cols, rows, nil
}
