package workload

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/suite"
)

// toyClause is what the toy flavor's tables end with beside MySQL's table
// options: a difference every suite's DDL shows.
const toyClause = " COMMENT='toy'"

// A flavor of an existing protocol whose SQL differs is its descriptor and
// its dialect, and nothing else: registered here (a toy MySQL-wire flavor
// whose CREATE TABLEs end with a clause of their own, MySQL's dialect
// copied with TableOptions changed), the plan gives the servers it starts
// of the flavor its dialect, a target of it keeps MySQL's, and every
// registered suite's SQL carries the difference in its DDL and is MySQL's
// elsewhere. Nothing here names a suite: a new one is checked the day it
// registers (docs/architecture.md, "Adding a flavor of an existing
// protocol").
func TestAToyFlavorsDialectReachesEverySuite(t *testing.T) {
	toy := client.MySQLDialect
	toy.TableOptions = func(engine string) string { return client.MySQLDialect.TableOptions(engine) + toyClause }
	t.Cleanup(client.RegisterDialect("toy", toy))
	t.Cleanup(build.RegisterFlavor(build.Descriptor{
		Flavor: "toy", Title: "Toy", Names: []string{"toysql"},
		Protocol: "mysql", Dialect: "toy", Family: "mysql", StorageEngines: true, Start: "mysql", Counters: "mysql",
	}, build.MySQL))

	f, err := build.ParseFlavor("toysql")
	if err != nil || f != "toy" || !f.HasServer() {
		t.Fatalf("ParseFlavor(toysql) = %q, %v (a server: %v); want the toy flavor", f, err, f.HasServer())
	}
	ep := client.Endpoint{Protocol: client.Protocol(f.Describe().Protocol)}
	started := plan.ServerDialect(build.Build{Name: "toy1", Flavor: f}, false, ep)
	if got := started.TableOptions("innodb"); got != " ENGINE = InnoDB"+toyClause {
		t.Fatalf("the plan gives a toy server it starts table options %q; want the toy's", got)
	}
	if got := plan.ServerDialect(build.Build{Name: "toy1", Flavor: f}, true, ep).TableOptions("innodb"); got != " ENGINE = InnoDB" {
		t.Errorf("a toy target's table options are %q; want its protocol's (MySQL's)", got)
	}
	mysql := plan.ServerDialect(build.Build{Name: "my1", Flavor: build.MySQL}, false, ep)

	withSQL := 0
	for _, s := range suite.All() {
		sq, ok := s.(suite.SQLer)
		if !ok {
			t.Errorf("suite %s does not say the SQL it sends (suite.SQLer; nil for none)", s.Name())
			continue
		}
		mine, theirs := sq.SQLOf(mysql), sq.SQLOf(started)
		if mine == nil && theirs == nil {
			continue // no SQL (db_bench)
		}
		withSQL++
		if len(mine) != len(theirs) {
			t.Errorf("%s: %d statements on MySQL, %d on the toy flavor", s.Name(), len(mine), len(theirs))
			continue
		}
		found := false
		for i, q := range theirs {
			if strings.Contains(mine[i], toyClause) {
				t.Errorf("%s: MySQL's SQL has the toy's clause: %s", s.Name(), mine[i])
			}
			if !strings.Contains(q, toyClause) {
				if q != mine[i] {
					t.Errorf("%s: the toy's statement differs from MySQL's elsewhere than its clause:\n%s\n%s", s.Name(), q, mine[i])
				}
				continue
			}
			found = true
			if !strings.HasPrefix(q, "CREATE TABLE ") {
				t.Errorf("%s: the toy's clause is outside a CREATE TABLE: %s", s.Name(), q)
			}
			if strings.Replace(q, toyClause, "", 1) != mine[i] {
				t.Errorf("%s: the toy's DDL is not MySQL's with its clause:\n%s\n%s", s.Name(), q, mine[i])
			}
		}
		if !found {
			t.Errorf("%s: no statement of its SQL on the toy flavor has the toy's clause %q", s.Name(), toyClause)
		}
	}
	if withSQL == 0 {
		t.Fatal("no registered suite says any SQL")
	}
}
