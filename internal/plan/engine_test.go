package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// Engines interleave as builds and configs do, inside each build and
// config (A:innodb A:rocksdb B:innodb …, every repeat); a PostgreSQL build
// runs once, with no engine; labels carry the engine unless it is InnoDB.
func TestItemsInterleaveEngines(t *testing.T) {
	p := &Runner{
		Suite:   testSuite{},
		Steps:   &suite.Plan{Steps: []suite.Step{task("load", nil), driven("q")}},
		Builds:  []build.Build{{Name: "A", Flavor: build.MariaDB}, {Name: "P", Flavor: build.Postgres}},
		Configs: []config.Config{{Name: "x"}}, Spec: Spec{StorageEngines: []string{"innodb", "rocksdb"}, Threads: []int{1}, Interleave: InterleavePass}, Design: Design{Repeat: 2},
	}
	var got []string
	for _, it := range p.Items() {
		got = append(got, fmt.Sprintf("%d%s/%s", it.Repeat, it.Label(), it.Test))
	}
	var want []string
	for _, rep := range []string{"1", "2"} {
		for _, l := range []string{"A.x", "A.x:rocksdb", "P.x"} {
			want = append(want, rep+l+"/load", rep+l+"/q")
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}
	start := p.start(p.Items()[2], p.Steps.Steps[0], 1)
	if start.Params["engine"] != "rocksdb" || start.Label() != "A.x:rocksdb" {
		t.Errorf("a MyRocks run starts with params %v, label %s", start.Params, start.Label())
	}
	if pg := p.start(p.Items()[4], p.Steps.Steps[0], 1); pg.Params["engine"] != "" {
		t.Errorf("a PostgreSQL run records engine %q", pg.Params["engine"])
	}
}

// --engine: names checked (all problems at once), MyRocks read as rocksdb,
// InnoDB the default; PostgreSQL refuses an --engine given.
func TestParseEngines(t *testing.T) {
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(s, suite.Defaults(Common, s.Params()).With("build", "b"))
	if err != nil || strings.Join(p.StorageEngines, ",") != "innodb" || p.StorageEngineSet {
		t.Fatalf("default: %v %v set=%v", err, p.StorageEngines, p.StorageEngineSet)
	}
	p, err = Parse(s, suite.Defaults(Common, s.Params()).With("build", "b").With("engine", "InnoDB,MyRocks"))
	if err != nil || strings.Join(p.StorageEngines, ",") != "innodb,rocksdb" || !p.StorageEngineSet {
		t.Fatalf("InnoDB,MyRocks: %v %v", err, p.StorageEngines)
	}
	for v, want := range map[string]string{
		"innodb,innodb": "--engine names innodb twice",
		"rocks db":      `--engine: storage engine "rocks db" is not an engine's name`,
		"x;drop":        "is not an engine's name",
		",":             "--engine: name at least one storage engine",
	} {
		_, err := Parse(s, suite.Defaults(Common, s.Params()).With("build", "b").With("engine", v))
		testenv.WantErr(t, err, want)
	}
	h := testenv.Home(t)
	steps := &suite.Plan{Steps: []suite.Step{driven("q")}}
	pg := Runner{Suite: testSuite{}, Steps: steps, Builds: []build.Build{{Name: "pg", Flavor: build.Postgres}},
		Configs: []config.Config{{Name: "default", Family: config.Postgres, Content: []byte("\n")}}, Spec: Spec{StorageEngines: []string{"rocksdb"}, StorageEngineSet: true}}
	testenv.WantErr(t, pg.Check(h), "--engine", "build pg is PostgreSQL", "leave --engine out")
	pg.StorageEngineSet = false
	if err := pg.Check(h); err != nil {
		t.Errorf("PostgreSQL with the default engine: %v", err)
	}
}

// engineTable is a task that creates a table in the session's engine and
// records the engine the server says the table has.
func engineTable(l *log) suite.Step {
	return task("load", func(ctx context.Context, s *suite.Server) (result.Totals, error) {
		c, err := s.Dial(ctx)
		if err != nil {
			return result.Totals{}, err
		}
		defer c.Close()
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS plan_engine"); err != nil {
			return result.Totals{}, err
		}
		if _, err := c.Exec(ctx, "CREATE TABLE plan_engine (id INT PRIMARY KEY)"+s.Dialect.TableOptions(s.StorageEngine)); err != nil {
			return result.Totals{}, err
		}
		n, err := client.Scalar(ctx, c, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'plan_engine' AND LOWER(ENGINE) = '"+s.StorageEngine+"'")
		l.add(fmt.Sprintf("table in %s: %d", s.StorageEngine, n))
		return result.Totals{Rows: 1}, err
	})
}

// On MariaDB 10.11: a plan of InnoDB and MyRocks without a config that
// loads MyRocks ends before anything runs, with one line that says what
// to do; with the shipped myrocks config each engine runs in a session of
// its own whose tables are that engine's, recorded with the engine.
func TestRunEnginesOnServer(t *testing.T) {
	h, b := serverHome(t)
	cs := config.Store{Dir: h.Configs()}
	myrocks, err := cs.Get("myrocks", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	def, err := cs.Get("default", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("no MyRocks in the config", func(t *testing.T) {
		l := &log{}
		p := newPlan(t, h, testSuite{steps: []suite.Step{engineTable(l)}}, l, b)
		p.StorageEngines = []string{"innodb", "rocksdb"}
		err := p.Run(context.Background(), h)
		testenv.WantErr(t, err, "build mariadb-system with config default@", "has no storage engine rocksdb", "--config myrocks")
		if len(l.events) != 0 {
			t.Errorf("something ran before the engine check: %v", l.events)
		}
	})

	t.Run("the second config lacks MyRocks", func(t *testing.T) {
		l := &log{}
		p := newPlan(t, h, testSuite{steps: []suite.Step{engineTable(l)}}, l, b)
		p.Configs = []config.Config{myrocks, def}
		p.StorageEngines = []string{"innodb", "rocksdb"}
		err := p.Run(context.Background(), h)
		testenv.WantErr(t, err, "config default@", "has no storage engine rocksdb")
		if len(l.events) != 0 {
			t.Errorf("something ran before the engine check of every config: %v", l.events)
		}
	})

	t.Run("myrocks", func(t *testing.T) {
		l := &log{}
		p := newPlan(t, h, testSuite{steps: []suite.Step{engineTable(l)}}, l, b)
		p.Configs = []config.Config{myrocks}
		p.StorageEngines = []string{"innodb", "rocksdb"}
		if err := p.Run(context.Background(), h); err != nil {
			t.Fatal(err)
		}
		want := "start load 1 on mariadb-system|table in innodb: 1|done load 1 ok|start load 1 on mariadb-system|table in rocksdb: 1|done load 1 ok"
		if got := strings.Join(l.events, "|"); got != want {
			t.Errorf("events:\n got %s\nwant %s", got, want)
		}
		if len(l.done) != 2 || l.done[0].StorageEngine() != "innodb" || l.done[1].StorageEngine() != "rocksdb" ||
			l.done[0].Label() != "mariadb-system.myrocks" || l.done[1].Label() != "mariadb-system.myrocks:rocksdb" {
			t.Errorf("recorded %d runs: %v", len(l.done), l.events)
		}
	})
}
