package client

import (
	"strings"
	"testing"
)

// The protocols' dialects write what the code that compared protocols
// wrote (each literal below is copied from it: sysbench's load, ycsb's
// table, script's init, tpcc's load and check, owned), and Rebind is
// the function it called.
func TestDialectsWriteWhatTheSuitesDid(t *testing.T) {
	my, ok := DialectOf(MySQL)
	if !ok {
		t.Fatal("no MySQL dialect")
	}
	pg, ok := DialectOf(Postgres)
	if !ok {
		t.Fatal("no PostgreSQL dialect")
	}
	if _, ok := DialectOf("oracle"); ok {
		t.Error("a dialect for a protocol qpslab does not speak")
	}
	for _, c := range []struct{ got, want string }{
		{my.TableOptions(""), ""},
		{my.TableOptions("innodb"), " ENGINE = InnoDB"},
		{my.TableOptions("rocksdb"), " ENGINE = ROCKSDB"},
		{my.TableOptions("xengine"), " ENGINE = xengine"},
		{pg.TableOptions("innodb"), ""},
		{my.AutoIncrement, "INTEGER NOT NULL AUTO_INCREMENT"},
		{pg.AutoIncrement, "SERIAL"},
		{my.ResyncAutoIncrement("sbtest3", "id"), ""},
		{pg.ResyncAutoIncrement("sbtest3", "id"), "SELECT setval(pg_get_serial_sequence('sbtest3', 'id'), COALESCE((SELECT max(id) FROM sbtest3), 0) + 1, false)"},
		{my.Timestamp, "datetime"},
		{pg.Timestamp, "timestamp"},
		{my.CommentClause("c"), " COMMENT = 'c'"},
		{pg.CommentClause("c"), ""},
		{my.CommentOn("usertable", "c"), ""},
		{pg.CommentOn("usertable", "c"), "COMMENT ON TABLE usertable IS 'c'"},
		{my.ReadComment("usertable"), "SELECT table_comment FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'usertable'"},
		{pg.ReadComment("usertable"), "SELECT obj_description('usertable'::regclass, 'pg_class')"},
		{my.Analyze("stock"), "ANALYZE TABLE stock"},
		{pg.Analyze("stock"), "VACUUM ANALYZE stock"},
		{my.SnapshotBegin, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"},
		{pg.SnapshotBegin, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"},
		{strings.Join(my.SessionSetup, ";"), "SET SESSION innodb_snapshot_isolation = OFF"},
		{strings.Join(pg.SessionSetup, ";"), ""},
		{my.End, "COMMIT;"},
		{pg.End, "END;"},
		{my.TableExists("t"), "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 't'"},
		{pg.TableExists("t"), "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 't'"},
		{my.HasDatabase, "SELECT 1 FROM DUAL WHERE DATABASE() IS NOT NULL"},
		{my.MaxConnections, "SELECT @@max_connections"},
		{pg.MaxConnections, "SELECT (SELECT setting::int FROM pg_settings WHERE name = 'max_connections') - (SELECT setting::int FROM pg_settings WHERE name = 'superuser_reserved_connections')"},
		{my.CacheBytes, "SELECT @@innodb_buffer_pool_size"},
		{pg.CacheBytes, "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings WHERE name = 'shared_buffers'"},
		{my.DatabaseBytes, ""},
		{pg.DatabaseBytes, "SELECT pg_database_size(current_database())"},
		{pg.HasDatabase, ""},
		{my.CountTablesExcept("qpslab_tables"), "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name <> 'qpslab_tables'"},
		{pg.CountTablesExcept("qpslab_tables"), "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace " +
			"WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relname <> 'qpslab_tables'"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if !my.StorageEngines || pg.StorageEngines || !my.ZeroNumbersID || pg.ZeroNumbersID {
		t.Error("Engines or ZeroNumbersID: the MySQL family's only")
	}
	for _, c := range []struct{ got, want Arg }{{my.Bool(true), Int(1)}, {my.Bool(false), Int(0)}, {pg.Bool(true), Str("true")}, {pg.Bool(false), Str("false")}} {
		if c.got.Value() != c.want.Value() {
			t.Errorf("a bool bound as %#v, want %#v", c.got.Value(), c.want.Value())
		}
	}
	for _, c := range []struct{ q, pg string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT ? FROM t WHERE a = ? AND b IN (?, ?)", "SELECT $1 FROM t WHERE a = $2 AND b IN ($3, $4)"},
		{"INSERT INTO t VALUES (?)", "INSERT INTO t VALUES ($1)"},
	} {
		if got := my.Rebind(c.q); got != c.q {
			t.Errorf("MySQL: Rebind(%q) = %q, want it as it is", c.q, got)
		}
		if got := pg.Rebind(c.q); got != c.pg {
			t.Errorf("PostgreSQL: Rebind(%q) = %q, want %q", c.q, got, c.pg)
		}
	}
	if got := (Endpoint{Protocol: Postgres}).Dialect().Rebind("?"); got != "$1" {
		t.Errorf("a PostgreSQL endpoint's dialect rebinds ? to %q", got)
	}
}

// The settle's and the target check's statements are what settle and
// target wrote themselves before they asked the dialect; the values that
// are no SQL are the ones they chose per protocol.
func TestTheSettleAndTargetStatements(t *testing.T) {
	my, pg := MySQLDialect, PostgresDialect
	for _, c := range []struct{ got, want string }{
		{my.ResetLog, "RESET MASTER"},
		{pg.ResetLog, ""},
		{my.Checkpoint, ""},
		{pg.Checkpoint, "CHECKPOINT"},
		{my.Vacuum("t", true), ""},
		{pg.Vacuum("t", false), "VACUUM (ANALYZE) t"},
		{pg.Vacuum("t", true), "VACUUM (ANALYZE, INDEX_CLEANUP ON) t"},
		{my.Analyze("t"), "ANALYZE TABLE t"},
		{my.Autovacuum, ""},
		{pg.Autovacuum, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'"},
		{my.Use("qpslab"), "USE `qpslab`"},
		{pg.Use("qpslab"), ""},
		{my.DatabaseExists("qpslab"), "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'qpslab'"},
		{my.CreateDatabase("qpslab"), "CREATE DATABASE `qpslab`"},
		{pg.CreateDatabase("qpslab"), `CREATE DATABASE "qpslab"`},
		{my.AdminDatabase, ""},
		{pg.AdminDatabase, "postgres"},
		{my.CanCreateTables, ""},
		{pg.CanCreateTables, "SELECT CASE WHEN has_schema_privilege(current_schema(), 'CREATE') THEN 1 ELSE 0 END"},
		{my.MaxConnections, "SELECT @@max_connections"},
		{pg.MaxConnections, "SELECT (SELECT setting::int FROM pg_settings WHERE name = 'max_connections') - (SELECT setting::int FROM pg_settings WHERE name = 'superuser_reserved_connections')"},
		{my.User + " " + pg.User, "root postgres"},
		{strings.Join(my.Schemes, ",") + " " + strings.Join(pg.Schemes, ","), "mysql,mariadb postgres,postgresql"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if my.Port != 3306 || pg.Port != 5432 {
		t.Errorf("ports %d, %d", my.Port, pg.Port)
	}
	for _, c := range []struct {
		v    string
		want bool
	}{{"12.1", true}, {"17", true}, {"11.22", false}, {"", true}} {
		if got := pg.IndexCleanup(c.v); got != c.want {
			t.Errorf("PostgreSQL %q: IndexCleanup %v", c.v, got)
		}
	}
	if my.IndexCleanup("12.0") {
		t.Error("the MySQL family has no VACUUM to clean indexes with")
	}
	for _, c := range []struct {
		path string
		port int
		ok   bool
	}{{"/run/postgresql/.s.PGSQL.5433", 5433, true}, {"/tmp/mysql.sock", 0, false}, {"/tmp/.s.PGSQL.0", 0, false}} {
		if p, ok := pg.SocketPort(c.path); p != c.port && c.ok || ok != c.ok {
			t.Errorf("PostgreSQL socket %s: port %d, %v", c.path, p, ok)
		}
	}
	if _, ok := my.SocketPort("/tmp/mysql.sock"); !ok {
		t.Error("a MySQL socket needs no port in its name")
	}
}
