package ibench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

func values(kv ...string) suite.Values {
	v := suite.Defaults(ibenchSuite{}.Params(), []suite.Param{{Name: "no-prepare", Default: "false"}, {Name: "sandbox"}})
	for i := 0; i < len(kv); i += 2 {
		v = v.With(kv[i], kv[i+1])
	}
	return v
}

// The reference's sizes and order: nr1 and nr2 over all clients, l.i1 and
// l.i2 split 4:1, the read+write steps per rate, range before point.
func TestPlanSizes(t *testing.T) {
	p, err := ibenchSuite{}.Configure(values("clients", "4", "mr1", "1", "mr2", "0.5", "query-secs", "10", "rates", "100,1000"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range p.Steps {
		names = append(names, st.Test)
		if len(st.Threads) != 1 || st.Threads[0] != 4 {
			t.Errorf("%s runs at %v clients, want 4", st.Test, st.Threads)
		}
	}
	if got := strings.Join(names, " "); got != "l.i0 l.x l.i1 l.i2 qr100 qp100 qr1000 qp1000" {
		t.Errorf("steps %s", got)
	}
	if p.Params["rows"] != "4000000" || p.Params["rows2"] != "2000000" || p.Params["tables"] != "4" {
		t.Errorf("params %v", p.Params)
	}
	o := Options{Clients: 4, MR1: 1, MR2: 0.5, QuerySecs: 10e9, Rates: []int{100}, QueryThreads: 1, RowsPerQuery: 10, Pacing: Smooth}
	for _, c := range []struct {
		step          string
		rows, per     int64
		workers, rate int
	}{
		{"l.i0", 1_000_000, 100, 1, 0}, {"l.i1", 400_000, 50, 1, 0}, {"l.i2", 100_000, 5, 1, 0}, {"qr100", 1000, 50, 2, 100},
	} {
		st := o.step(c.step, 0)
		wl := st.Drive.Workload(&suite.Server{Protocol: client.MySQL, Dialect: client.MySQLDialect}, 1).(*workload)
		if wl.ph.rows != c.rows || int64(wl.ph.perCommit) != c.per || wl.ph.workers() != c.workers || int(wl.ph.rate) != c.rate {
			t.Errorf("%s: phase %+v, want %d rows per client, %d per commit, %d workers, %d rows/s", c.step, wl.ph, c.rows, c.per, c.workers, c.rate)
		}
	}
	if got := strings.Join((Options{Clients: 3, Shared: true}).Tables(), ","); got != "pi1,pi1,pi1" {
		t.Errorf("shared tables %s", got)
	}
}

// Bad values are refused at once, each said.
func TestConfigureRefuses(t *testing.T) {
	_, err := ibenchSuite{}.Configure(values("delete-per-insert", "true", "shared-table", "true", "pacing", "burst"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"--delete-per-insert and --shared-table", "--pacing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := (Options{Clients: 1, Rates: []int{100}, Steps: []string{"l.i9"}}).Plan(); err == nil || !strings.Contains(err.Error(), "l.i9") {
		t.Errorf("unknown step: %v", err)
	}
}

// The statements as the reference writes them.
func TestStatements(t *testing.T) {
	if q := rangeQuery(client.MySQLDialect, "pi1", 1, 10); q != "SELECT cashregisterid, customerid, price FROM pi1 FORCE INDEX (pi1_registersegment) WHERE cashregisterid > ? ORDER BY cashregisterid, customerid, price LIMIT 10" {
		t.Errorf("range query %s", q)
	}
	if q := rangeQuery(client.PostgresDialect, "pi2", 0, 10); !strings.Contains(q, "productid >= $1") || strings.Contains(q, "FORCE") {
		t.Errorf("range query %s", q)
	}
	if q := deleteOldest(client.PostgresDialect, "pi1", 7, 50); q != "DELETE FROM pi1 WHERE transactionid IN (SELECT transactionid FROM pi1 WHERE transactionid >= 7 ORDER BY transactionid ASC LIMIT 50)" {
		t.Errorf("delete %s", q)
	}
	if got := createIndexes(client.MySQLDialect, "pi1", "innodb"); len(got) != 1 || strings.Count(got[0], "ADD INDEX") != 3 {
		t.Errorf("MySQL indexes %v", got)
	}
	// MyRocks: one ALTER per index, as the reference.
	if got := createIndexes(client.MySQLDialect, "pi1", "rocksdb"); len(got) != 3 || got[0] != "ALTER TABLE pi1 ADD INDEX pi1_marketsegment (productid, customerid, price)" {
		t.Errorf("MyRocks indexes %v", got)
	}
	if got := createTable(client.MySQLDialect, "pi1", "rocksdb"); !strings.HasSuffix(got, "primary key (transactionid)) ENGINE = ROCKSDB") {
		t.Errorf("MyRocks table %s", got)
	}
	g := rowGen{r: newRand(1)}
	q := g.insert("pi1", 3, testTime)
	if strings.Count(q, "('2026-01-02 03:04:05',") != 3 || !strings.HasPrefix(q, "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) VALUES (") {
		t.Errorf("insert %s", q)
	}
}

var testTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// --clients 1,4 is two passes of every step in order, the second on tables
// of its own size: each step runs at its pass's count and records its
// pass's sizes; one count keeps the plan as it was.
func TestPlanPasses(t *testing.T) {
	p, err := ibenchSuite{}.Configure(values("clients", "1,4", "mr1", "1", "mr2", "0.5", "rates", "100"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range p.Steps {
		if len(st.Threads) != 1 {
			t.Fatalf("%s runs at %v", st.Test, st.Threads)
		}
		got = append(got, fmt.Sprintf("%s@%d:%s/%s/%s/%s", st.Test, st.Threads[0], st.Params["clients"], st.Params["rows"], st.Params["rows2"], st.Params["tables"]))
	}
	want := "l.i0@1:1/1000000/500000/1 l.x@1:1/1000000/500000/1 l.i1@1:1/1000000/500000/1 l.i2@1:1/1000000/500000/1 qr100@1:1/1000000/500000/1 qp100@1:1/1000000/500000/1 " +
		"l.i0@4:4/4000000/2000000/4 l.x@4:4/4000000/2000000/4 l.i1@4:4/4000000/2000000/4 l.i2@4:4/4000000/2000000/4 qr100@4:4/4000000/2000000/4 qp100@4:4/4000000/2000000/4"
	if strings.Join(got, " ") != want {
		t.Errorf("steps\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if _, ok := p.Params["rows"]; ok || p.Params["pacing"] != "smooth" {
		t.Errorf("plan params %v: the sizes are each pass's", p.Params)
	}
	if p.Steps[6].Params["insert_rate"] != "" || p.Steps[10].Params["insert_rate"] != "100" || p.Steps[0].Order != p.Steps[6].Order {
		t.Errorf("the second pass's steps: %+v, %+v", p.Steps[6].Params, p.Steps[10].Params)
	}
	one, err := ibenchSuite{}.Configure(values("clients", "4"))
	if err != nil {
		t.Fatal(err)
	}
	if one.Params["rows"] != "400000" || one.Steps[0].Params != nil || len(one.Steps) != 10 {
		t.Errorf("one count: params %v, first step's %v, %d steps", one.Params, one.Steps[0].Params, len(one.Steps))
	}
}

// A bad list of client counts is one line naming it and what to give.
func TestClientsRefused(t *testing.T) {
	for given, want := range map[string]string{
		"":      `--clients "": give at least one client count (e.g. 1 or 1,4)`,
		",":     `--clients ,: give at least one client count (e.g. 1 or 1,4)`,
		"1,x":   "--clients 1,x: give whole numbers from 1 to 4096, comma-separated (e.g. 1,4,16)",
		"0":     "--clients 0: give whole numbers from 1 to 4096, comma-separated (e.g. 1,4,16)",
		"4,1,4": "--clients 4,1,4: 4 clients given twice; give each count once (e.g. 1,4)",
	} {
		_, err := ibenchSuite{}.Configure(values("clients", given))
		if err == nil || err.Error() != want {
			t.Errorf("--clients %q: %v, want %s", given, err, want)
		}
	}
}

// A delete per insert is the default, as the reference's runs since 2024:
// recorded, in every step from l.i1 on; --no-delete-per-insert turns it
// off, --shared-table has none (the reference cannot combine them), and
// asking for both of a contradiction is refused.
func TestDeletesByDefault(t *testing.T) {
	for _, c := range []struct {
		kv      []string
		deletes bool
		refused string
	}{
		{nil, true, ""},
		{[]string{"delete-per-insert", "true"}, true, ""},
		{[]string{"no-delete-per-insert", "true"}, false, ""},
		{[]string{"shared-table", "true"}, false, ""},
		{[]string{"shared-table", "true", "no-delete-per-insert", "true"}, false, ""},
		{[]string{"shared-table", "true", "delete-per-insert", "true"}, false, "exclude each other"},
		{[]string{"delete-per-insert", "true", "no-delete-per-insert", "true"}, false, "contradict"},
	} {
		p, err := ibenchSuite{}.Configure(values(append([]string{"clients", "2", "rates", "100"}, c.kv...)...))
		if c.refused != "" {
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%v: error %v, want %q", c.kv, err, c.refused)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.kv, err)
		}
		if got := p.Params["delete_per_insert"]; got != fmt.Sprint(c.deletes) {
			t.Errorf("%v: delete_per_insert=%s, want %v", c.kv, got, c.deletes)
		}
		for _, st := range p.Steps {
			if st.Drive == nil {
				continue
			}
			wl := st.Drive.Workload(&suite.Server{Protocol: client.MySQL, Dialect: client.MySQLDialect}, 1).(*workload)
			if want := c.deletes && st.Test != "l.i0"; wl.ph.deletes != want {
				t.Errorf("%v: %s deletes %v, want %v", c.kv, st.Test, wl.ph.deletes, want)
			}
		}
	}
}

// The live rows verdict: what l.x left (perClient(nr1) + 100 per table) on
// the MySQL family, up to the sequence's skipped ids more on PostgreSQL,
// never fewer; a table that grew or shrank fails it, named.
func TestLiveVerdict(t *testing.T) {
	o := Options{Clients: 2, MR1: 0.001, Deletes: true}
	for _, c := range []struct {
		proto client.Protocol
		order int
		live  []int64
		ok    bool
	}{
		{client.MySQL, 2, []int64{1100, 1100}, true},
		{client.MySQL, 2, []int64{1100, 1150}, false},
		{client.MySQL, 4, []int64{1100, 1099}, false},
		{client.Postgres, 2, []int64{1100, 4100}, true},
		{client.Postgres, 2, []int64{1100, 4101}, false},
		{client.Postgres, 5, []int64{7100, 1100}, true},
		{client.Postgres, 5, []int64{1099, 1100}, false},
	} {
		v := o.liveVerdict(testenv.DialectOf(c.proto), c.order, c.live)
		if v.OK != c.ok || v.Name != VerdictLiveRows || !strings.Contains(v.Detail, "1100") {
			t.Errorf("%v at step %d, live %v: %+v, want ok=%v", c.proto, c.order, c.live, v, c.ok)
		}
	}
}
