package plan

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A suite without a server (db_bench's kind): each build × config gets a
// scratch sandbox folder with the build's program, the config and a Start
// that ties what it runs to qpslab; the task's samples are its run's; no
// client params are recorded; the folder is gone afterwards.
func TestNoServer(t *testing.T) {
	h := testenv.Home(t)
	t.Setenv("QPSLAB_HOME", h.Root)
	prog := filepath.Join(t.TempDir(), "db_bench")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho \"$@\" > out.txt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := build.Build{Name: "rx", Flavor: build.RocksDB, Version: "9.7.3", Program: prog}
	cfg := config.Config{Name: "cra96k", Family: config.RocksDB, Content: []byte("--compaction_readahead_size=96K\n")}
	var seen []*suite.Server
	var checked []string
	step := suite.Step{Test: "fillseq.cached", Role: result.RoleLoad, Threads: []int{1},
		Headline: suite.Headline{Unit: "ops/s", Op: "op", Series: result.SeriesEvents, Value: func(t result.Totals) float64 { return t.TPS }},
		Task: &suite.Task{Run: func(ctx context.Context, s *suite.Server, _ int, _ uint64, tio suite.TaskIO) (result.Totals, error) {
			seen = append(seen, s)
			cmd := exec.CommandContext(ctx, s.Program, string(s.Config.Content))
			cmd.Dir = s.Datadir
			wait, err := s.Start(cmd)
			if err != nil {
				return result.Totals{}, err
			}
			if err := wait(); err != nil {
				return result.Totals{}, err
			}
			tio.Sample(result.Sample{Second: 0, Events: 10})
			tio.Sample(result.Sample{Second: 1, Events: 30})
			return result.Totals{Events: 40, Seconds: 2}, nil
		}}}
	l := &log{}
	p := &Runner{Suite: testSuite{}, Steps: &suite.Plan{Steps: []suite.Step{step}, NoServer: true, Flavors: []build.Flavor{build.RocksDB},
		Check: func(_ context.Context, b build.Build, c config.Config) error {
			checked = append(checked, b.Name+"."+c.Name)
			return nil
		}},
		Builds: []build.Build{b}, Configs: []config.Config{cfg}, Spec: Spec{Threads: []int{1}}, Design: Design{Repeat: 1}}
	p.Record = func(start result.Run) (Recorder, error) { return rec{l: l, r: start}, nil }
	if err := p.Run(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	if strings.Join(checked, " ") != "rx.cra96k" {
		t.Errorf("checked %v", checked)
	}
	if len(seen) != 1 || seen[0].Program != prog || seen[0].Config.Name != "cra96k" || seen[0].Dial != nil || seen[0].Flavor != "rocksdb" ||
		seen[0].Datadir != filepath.Join(sandbox.Dir(h, "rx.cra96k"), "data") {
		t.Fatalf("the suite saw %+v", seen)
	}
	if len(l.done) != 1 {
		t.Fatalf("runs %+v", l.done)
	}
	r := l.done[0]
	if r.Status != result.OK || len(r.Samples) != 2 || r.Totals.TPS != 20 || r.Totals.Reported != 20 || r.Config != cfg.ID() {
		t.Errorf("run %+v", r)
	}
	if _, ok := r.Params["tcp"]; ok || r.Params["transport"] != "" {
		t.Errorf("client params on a run without a server: %v", r.Params)
	}
	if _, err := os.Stat(sandbox.Dir(h, "rx.cra96k")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the scratch folder is still there: %v", err)
	}
}

// A suite without a server runs only its flavors, on no --sandbox; a suite
// that talks to a server refuses a build that is none; the suite's check of
// a build × config stops the plan before anything runs.
func TestCheckFlavors(t *testing.T) {
	h := testenv.Home(t)
	rx := build.Build{Name: "rx", Flavor: build.RocksDB}
	my := build.Build{Name: "my", Flavor: build.MariaDB}
	flags := config.Config{Name: "default", Family: config.RocksDB, Content: []byte("\n")}
	cnf := config.Config{Name: "default", Family: config.MySQL, Content: []byte("[mysqld]\n")}
	noServer := &suite.Plan{Steps: []suite.Step{task("t", nil)}, NoServer: true, Flavors: []build.Flavor{build.RocksDB}}
	refuse := &suite.Plan{Steps: noServer.Steps, NoServer: true, Flavors: noServer.Flavors,
		Check: func(context.Context, build.Build, config.Config) error {
			return errors.New("config default line 1: no flag --x")
		}}
	for _, c := range []struct {
		p    Runner
		want string
	}{
		{Runner{Suite: testSuite{}, Steps: noServer, Builds: []build.Build{my}, Configs: []config.Config{cnf}}, "suite plan-test runs rocksdb builds, and build my is mariadb"},
		{Runner{Suite: testSuite{}, Steps: &suite.Plan{Steps: []suite.Step{driven("q")}}, Builds: []build.Build{rx}, Configs: []config.Config{flags}}, "build rx is rocksdb, which is no server, and suite plan-test needs one"},
		{Runner{Suite: testSuite{}, Steps: noServer, Builds: []build.Build{rx}, Configs: []config.Config{flags}, Spec: Spec{Sandbox: "s"}}, "leave out --sandbox"},
		{Runner{Suite: testSuite{}, Steps: refuse, Builds: []build.Build{rx}, Configs: []config.Config{flags}}, "no flag --x"},
	} {
		testenv.WantErr(t, c.p.Check(h), c.want)
	}
}
