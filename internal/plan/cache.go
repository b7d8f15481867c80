package plan

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
)

// size sizes the cache of each server of block for an iobound workload
// (suite.Plan.Cache), after the step that ends the load (suite.Step.Sizes):
// it measures what the server's tables take on disk, and restarts the
// server on its datadir with its cache that fraction of it and direct IO
// (config.IOBound). A server whose cache is within a tenth of that already
// (a reload of the same tables) keeps running.
func (g *grouped) size(ctx context.Context, block []*server) error {
	p := g.p
	for _, s := range block {
		i := slices.Index(g.srvs, s)
		label := s.spec.Label()
		tables, err := tablesBytes(ctx, s)
		if err != nil {
			return hookErr(ctx, s, fmt.Errorf("--workload iobound: measure the loaded tables of %s: %w", label, err))
		}
		// What the server will get (config.IOBound gives at least
		// MinCache): tables that need less keep a server at the minimum
		// running, rather than restarting it on every reload.
		want := max(int64(float64(tables)*p.Steps.Cache), config.MinCache)
		if s.sized != nil && math.Abs(float64(want)-s.cacheMB*(1<<20)) <= 0.1*s.cacheMB*(1<<20) {
			// The server keeps its cache; its runs record these tables (the
			// Insert Benchmark's next pass loads more than the last).
			s.tablesMB = float64(tables) / (1 << 20)
			p.logf("-- %s: the loaded tables take %.0f MB; the server keeps its cache of %.0f MB (%.3g of them)", label, s.tablesMB, s.cacheMB, s.cacheMB/max(s.tablesMB, 1e-9))
			continue
		}
		cfg, set, err := config.IOBound(s.spec.Config, want, s.spec.Build.AtLeast)
		if err != nil {
			return err
		}
		p.logf("-- %s: the loaded tables take %.0f MB; the server restarts with its cache at %g of them: %s", label, float64(tables)/(1<<20), p.Steps.Cache, set)
		if err := s.down(); err != nil {
			return fmt.Errorf("stop %s to size its cache: %w", label, err)
		}
		s.sized = &cfg
		ns, err := g.restart(ctx, i)
		if err != nil {
			return err
		}
		ns.tablesMB = float64(tables) / (1 << 20)
		cache, err := cacheBytes(ctx, ns)
		if err != nil {
			return hookErr(ctx, ns, fmt.Errorf("--workload iobound: read the cache %s started with: %w", label, err))
		}
		ns.cacheMB = float64(cache) / (1 << 20)
		p.logf("-- %s: the cache is %.0f MB, %.3g of the tables' %.0f MB", label, ns.cacheMB, ns.cacheMB/max(ns.tablesMB, 1e-9), ns.tablesMB)
	}
	return nil
}

// tablesBytes is what the server's tables take on disk: on the MySQL
// family the files of qpslab's database folder in the datadir (InnoDB's
// file per table), where the server says it (PostgreSQL) the dialect's
// DatabaseBytes (pg_database_size).
func tablesBytes(ctx context.Context, s *server) (int64, error) {
	if q := s.srv.Dialect.DatabaseBytes; q != "" {
		conn, err := s.srv.Dial(ctx)
		if err != nil {
			return 0, err
		}
		defer conn.Close()
		return client.Scalar(ctx, conn, q)
	}
	dir := filepath.Join(s.datadir, sandbox.Database)
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if total < 1<<20 {
		return 0, fmt.Errorf("the files in %s take %d bytes: the tables are not there (innodb_file_per_table off keeps them in the system tablespace; --workload iobound needs it on)", dir, total)
	}
	return total, nil
}

// cacheBytes is the cache the server reports it runs with.
func cacheBytes(ctx context.Context, s *server) (int64, error) {
	conn, err := s.srv.Dial(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return client.Scalar(ctx, conn, s.srv.Dialect.CacheBytes)
}

// judgeIO adds to run res, of step k on s, what an iobound plan records
// after the cache was sized: the cache and the tables' size, and the
// verdict whether the run was IO-bound (counters.IOBound), which a run
// served from memory fails, with a warning. The load's steps are not
// judged: they run before their cache is sized (the Insert Benchmark's
// second pass loads on the first pass's cache).
func (p *Runner) judgeIO(k int, s *server, res *result.Run) {
	if p.Steps.Cache <= 0 || s.sized == nil || res.Status != result.OK || p.loads(k) {
		return
	}
	st := p.Steps.Steps[k]
	if res.Totals.Figures == nil {
		res.Totals.Figures = map[string]float64{}
	}
	res.Totals.Figures[counters.FigureCacheMB] = s.cacheMB
	res.Totals.Figures[counters.FigureTablesMB] = s.tablesMB
	v, ok := counters.IOBound(*res)
	if !ok {
		p.warn(fmt.Sprintf("%s on %s: --workload iobound, and whether the run was IO-bound cannot be told: storage reads were not measured (--device)", st.Test, s.spec.Label()))
		return
	}
	res.Verdicts = append(res.Verdicts, v)
	if !v.OK && st.Role == result.RoleTest {
		p.warn(fmt.Sprintf("%s on %s: asked to be IO-bound, and was not: %s", st.Test, s.spec.Label(), v.Detail))
	}
}

// loads says whether step k is part of a load that an iobound plan sizes
// the cache after: the step marked Sizes, or one before it in the same
// pass of the suite's order (a step whose Order is below the one before it
// begins a new pass: the Insert Benchmark's next client count).
func (p *Runner) loads(k int) bool {
	steps := p.Steps.Steps
	for j := k; j < len(steps); j++ {
		if j > k && steps[j].Order < steps[j-1].Order {
			return false
		}
		if steps[j].Sizes {
			return true
		}
	}
	return false
}
