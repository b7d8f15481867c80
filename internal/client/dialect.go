package client

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Dialect is the SQL that differs between the protocols' servers, as the
// suites and their helpers (owned) need it: one seam per protocol. It is
// chosen once, and the plan gives it every suite as suite.Server.Dialect:
// for a server qpslab starts, its build's flavor's (the dialect its
// descriptor names, build.Descriptor.Dialect); for a target, its
// protocol's (Endpoint.Dialect). Code outside this package asks the
// dialect's fields and never compares a protocol (internal/arch's
// TestAskTheDialectNotTheProtocol). It is a plain value: a flavor whose
// servers speak an existing protocol with a difference of their own copies
// its protocol's dialect, changes a field (say TableOptions) and registers
// it (RegisterDialect) under the name its descriptor gives. Its function
// fields keep it from being compared with ==.
type Dialect struct {
	// Placeholder is a prepared statement's n-th parameter marker (n from
	// 1): ? on the MySQL family, $n on PostgreSQL. Rebind uses it.
	Placeholder func(n int) string

	// TableOptions is what a CREATE TABLE ends with to make the table in
	// storage engine engine (the MySQL family's " ENGINE = InnoDB"; ""
	// for the server's default, and always on PostgreSQL, which has no
	// engines to choose).
	TableOptions func(engine string) string
	// StorageEngines says information_schema.TABLES names each table's storage
	// engine, so that the engine of a kept table can be checked.
	StorageEngines bool

	// AutoIncrement is the type of an integer key column the server
	// numbers itself (sysbench's id).
	AutoIncrement string
	// ZeroNumbersID says an INSERT that gives such a column 0 has the
	// server number the row (MySQL); false: the column is left out.
	ZeroNumbersID bool
	// ResyncAutoIncrement is the query that moves the counter of table's
	// column past the ids a load wrote itself; "" when the server needs
	// none (MySQL's AUTO_INCREMENT follows the rows).
	ResyncAutoIncrement func(table, column string) string

	// Timestamp is the type of a date-and-time column (TPC-C's).
	Timestamp string

	// CommentClause is what a CREATE TABLE ends with (after TableOptions)
	// to give the table a comment; "" when CommentOn gives it instead.
	CommentClause func(comment string) string
	// CommentOn is the statement run after the CREATE TABLE that gives
	// table its comment; "" when CommentClause did.
	CommentOn func(table, comment string) string
	// ReadComment is the query whose one row and column is table's
	// comment.
	ReadComment func(table string) string

	// Analyze is the statement that collects table's statistics after a
	// load, as the suites' references run it (it may return rows: run it
	// with Query).
	Analyze func(table string) string
	// SnapshotBegin begins a read-only transaction that reads one
	// snapshot (TPC-C's consistency check).
	SnapshotBegin string
	// SessionSetup are statements a transactional suite's connection
	// (TPC-C's terminals) runs first; an error that the server lacks the
	// variable is not one (the variable came with a later version).
	SessionSetup []string
	// End is how a pgbench script's END is written for the server.
	End string
	// Bool is a script's boolean bound as the server takes it.
	Bool func(b bool) Arg

	// MaxConnections is the query that reads how many connections the
	// server lets a client open (PostgreSQL's superuser reserve left out).
	MaxConnections string
	// CacheBytes is the query that reads the size of the server's page
	// cache (InnoDB's buffer pool, shared_buffers).
	CacheBytes string
	// DatabaseBytes is the query that reads what the connection's
	// database takes on disk; "" when the server cannot say it (the MySQL
	// family: the plan sums the files of the database's folder).
	DatabaseBytes string

	// TableExists is the query that returns a row when table exists in
	// the connection's database or current schema.
	TableExists func(table string) string
	// HasDatabase is the query that returns a row when the connection has
	// a current database; "" when it always has one.
	HasDatabase string
	// CountTablesExcept is the query that counts the tables and views of
	// the connection's database or current schema other than table.
	CountTablesExcept func(table string) string
	// TablesBytes is the query that reads what tables (data and indexes)
	// take, in bytes, as the server counts it.
	TablesBytes func(tables []string) string

	// The Insert Benchmark's table (iibench's create_table_*): its key,
	// numbered by the server, and its timestamp, as the reference spells
	// them.

	// BigIdentity is a 64-bit key column the server numbers itself: def
	// follows the column's name, key ends the column list to make it the
	// primary key ("" when def does).
	BigIdentity func(column string) (def, key string)
	// LocalTimestamp is the type of a date-and-time column without a
	// time zone, spelled out.
	LocalTimestamp string
	// CacheIdentity is the statement that has the server hand out table's
	// numbers of column n at a time to a session (PostgreSQL's sequence
	// CACHE: the numbers a session took and did not use are skipped); ""
	// when the server numbers the rows in order (the MySQL family).
	CacheIdentity func(table, column string, n int) string
	// AlterAddIndex says indexes are added with ALTER TABLE … ADD INDEX,
	// several in one statement (the MySQL family); false: CREATE INDEX,
	// one statement each.
	AlterAddIndex bool
	// DeleteLimit says a DELETE takes ORDER BY and LIMIT itself (the MySQL
	// family); false: the rows to delete are chosen by a subquery.
	DeleteLimit bool
	// ForceIndex is the hint after a table's name that makes a query use
	// index; "" when the server takes no such hint.
	ForceIndex func(index string) string
	// Prepares says the Insert Benchmark's reference prepares its queries
	// on the server, binding their values (PostgreSQL); false: it writes
	// the values into the statement's text (the MySQL family).
	Prepares bool

	// The flush and the wait after writes (internal/settle), and the
	// quiet wait before a read test.

	// ResetLog is the statement that drops the server's binary logs (the
	// MySQL family's RESET MASTER; it fails on a server that keeps none);
	// "" when the server has none to drop.
	ResetLog string
	// Checkpoint is the statement that writes the server's dirty pages
	// back now (it needs a superuser); "" when the server has none (the
	// MySQL family's InnoDB is told to flush by its variables).
	Checkpoint string
	// Vacuum is the statement that vacuums table and refreshes its
	// statistics, cleaning its indexes too where indexCleanup; "" when the
	// server has no VACUUM (its statistics are then refreshed by Analyze).
	// A server that vacuums keeps a visibility map, which settle makes
	// whole.
	Vacuum func(table string, indexCleanup bool) string
	// IndexCleanup says a server of version takes Vacuum's indexCleanup
	// (INDEX_CLEANUP ON: PostgreSQL 12 and later; an unknown version is
	// taken for a current one).
	IndexCleanup func(version string) bool
	// Autovacuum is the query that counts the server's running autovacuum
	// workers; "" when it has none.
	Autovacuum string

	// What a target (a server qpslab does not start) is registered and
	// checked with (internal/target).

	// Port is the TCP port the servers listen on unless told otherwise.
	Port int
	// User is the superuser's usual name, the account a target logs in as
	// unless told otherwise.
	User string
	// Schemes are the URL schemes of a DSN of the server (mysql://…), the
	// usual first.
	Schemes []string
	// SocketPort is the port the driver is given for a Unix socket at path
	// (PostgreSQL's names the socket by its folder and the port in its
	// name, .s.PGSQL.5432; 0: the driver takes the path itself, as the
	// MySQL family's does); ok is false when the path is not a socket the
	// driver can name.
	SocketPort func(path string) (port int, ok bool)
	// Use is the statement that makes db the connection's database; ""
	// when a connection's database is chosen only when it logs in. A
	// server with Use is logged in to without a database, which qpslab
	// then creates if it is not there (DatabaseExists) and uses.
	Use func(db string) string
	// DatabaseExists is the query that counts the databases called db.
	DatabaseExists func(db string) string
	// CreateDatabase is the statement that creates database db.
	CreateDatabase func(db string) string
	// AdminDatabase is the database logged in to, when the one wanted is
	// not there, to create it (PostgreSQL's postgres); "" with Use.
	AdminDatabase string
	// CanCreateTables is the query whose one value is 1 when the user may
	// create tables in the connection's current schema, 0 when not; ""
	// when a database's privileges say so (the MySQL family, whose
	// CREATE DATABASE or USE failed otherwise).
	CanCreateTables string
}

// Rebind rewrites the ? placeholders of q into the dialect's own
// (Placeholder). The statements qpslab writes hold no literal question
// marks, so no SQL parsing is needed (and no driver exports its
// rebinding).
func (d Dialect) Rebind(q string) string {
	if strings.IndexByte(q, '?') < 0 || d.Placeholder(1) == "?" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString(d.Placeholder(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// storageEngineNames are how the servers spell the engines they ship; any other
// engine is written as given (engine names are not case-sensitive).
var storageEngineNames = map[string]string{"innodb": "InnoDB", "rocksdb": "ROCKSDB", "myisam": "MyISAM", "aria": "Aria", "memory": "MEMORY", "tokudb": "TokuDB"}

// MySQLDialect is the MySQL family's (MariaDB, MySQL).
var MySQLDialect = Dialect{
	Placeholder: func(int) string { return "?" },
	TableOptions: func(engine string) string {
		if engine == "" {
			return ""
		}
		if n, ok := storageEngineNames[engine]; ok {
			engine = n
		}
		return " ENGINE = " + engine
	},
	StorageEngines:      true,
	AutoIncrement:       "INTEGER NOT NULL AUTO_INCREMENT",
	ZeroNumbersID:       true,
	ResyncAutoIncrement: func(string, string) string { return "" },
	Timestamp:           "datetime",
	CommentClause:       func(c string) string { return " COMMENT = '" + c + "'" },
	CommentOn:           func(string, string) string { return "" },
	ReadComment: func(table string) string {
		return "SELECT table_comment FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '" + table + "'"
	},
	Analyze:       func(table string) string { return "ANALYZE TABLE " + table },
	SnapshotBegin: "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
	// MariaDB 11.6.2 and later refuse, under REPEATABLE READ, a write to
	// a row changed since the transaction's snapshot (error 1020): TPC-C's
	// reads before its locking reads would fail and be retried as they do
	// on no other server. HammerDB turns it off for its sessions; so does
	// qpslab (a server without it: nothing to do).
	SessionSetup: []string{"SET SESSION innodb_snapshot_isolation = OFF"},
	End:          "COMMIT;",
	Bool: func(b bool) Arg {
		if b {
			return Int(1)
		}
		return Int(0)
	},
	TableExists: func(table string) string {
		return "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '" + table + "'"
	},
	MaxConnections: "SELECT @@max_connections",
	CacheBytes:     "SELECT @@innodb_buffer_pool_size",
	HasDatabase:    "SELECT 1 FROM DUAL WHERE DATABASE() IS NOT NULL",
	CountTablesExcept: func(table string) string {
		return "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name <> '" + table + "'"
	},
	TablesBytes: func(tables []string) string {
		return "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('" + strings.Join(tables, "', '") + "')"
	},
	BigIdentity: func(column string) (string, string) {
		return "bigint not null auto_increment", ", primary key (" + column + ")"
	},
	LocalTimestamp: "datetime",
	CacheIdentity:  func(string, string, int) string { return "" },
	AlterAddIndex:  true,
	DeleteLimit:    true,
	ForceIndex:     func(index string) string { return " FORCE INDEX (" + index + ")" },
	ResetLog:       "RESET MASTER",
	Vacuum:         func(string, bool) string { return "" },
	IndexCleanup:   func(string) bool { return false },
	Port:           3306,
	User:           "root",
	Schemes:        []string{"mysql", "mariadb"},
	SocketPort:     func(string) (int, bool) { return 0, true },
	Use:            func(db string) string { return "USE `" + db + "`" },
	DatabaseExists: func(db string) string {
		return "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = '" + db + "'"
	},
	CreateDatabase: func(db string) string { return "CREATE DATABASE `" + db + "`" },
}

// PostgresDialect is PostgreSQL's.
var PostgresDialect = Dialect{
	Placeholder:   func(n int) string { return "$" + strconv.Itoa(n) },
	TableOptions:  func(string) string { return "" },
	AutoIncrement: "SERIAL",
	ResyncAutoIncrement: func(table, column string) string {
		return "SELECT setval(pg_get_serial_sequence('" + table + "', '" + column + "'), COALESCE((SELECT max(" + column + ") FROM " + table + "), 0) + 1, false)"
	},
	Timestamp:     "timestamp",
	CommentClause: func(string) string { return "" },
	CommentOn:     func(table, c string) string { return "COMMENT ON TABLE " + table + " IS '" + c + "'" },
	ReadComment: func(table string) string {
		return "SELECT obj_description('" + table + "'::regclass, 'pg_class')"
	},
	Analyze:       func(table string) string { return "VACUUM ANALYZE " + table },
	SnapshotBegin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
	End:           "END;",
	Bool:          func(b bool) Arg { return Str(strconv.FormatBool(b)) },
	MaxConnections: "SELECT (SELECT setting::int FROM pg_settings WHERE name = 'max_connections') - " +
		"(SELECT setting::int FROM pg_settings WHERE name = 'superuser_reserved_connections')",
	CacheBytes:    "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings WHERE name = 'shared_buffers'",
	DatabaseBytes: "SELECT pg_database_size(current_database())",
	TableExists: func(table string) string {
		return "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = '" + table + "'"
	},
	CountTablesExcept: func(table string) string {
		return "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace " +
			"WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relname <> '" + table + "'"
	},
	TablesBytes: func(tables []string) string {
		var parts []string
		for _, t := range tables {
			parts = append(parts, "pg_total_relation_size('"+t+"')")
		}
		return "SELECT (" + strings.Join(parts, " + ") + ")::bigint"
	},
	BigIdentity:    func(string) (string, string) { return "bigserial primary key", "" },
	LocalTimestamp: "timestamp without time zone",
	CacheIdentity: func(table, column string, n int) string {
		return "ALTER SEQUENCE " + table + "_" + column + "_seq CACHE " + strconv.Itoa(n)
	},
	ForceIndex: func(string) string { return "" },
	Prepares:   true,
	Checkpoint: "CHECKPOINT",
	Vacuum: func(table string, indexCleanup bool) string {
		if indexCleanup {
			return "VACUUM (ANALYZE, INDEX_CLEANUP ON) " + table
		}
		return "VACUUM (ANALYZE) " + table
	},
	IndexCleanup: func(version string) bool { return majorAtLeast(version, 12) },
	Autovacuum:   "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'",
	Port:         5432,
	User:         "postgres",
	Schemes:      []string{"postgres", "postgresql"},
	SocketPort: func(path string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(path), ".s.PGSQL."))
		return n, err == nil && strings.HasPrefix(filepath.Base(path), ".s.PGSQL.") && n > 0 && n < 65536
	},
	Use: func(string) string { return "" },
	DatabaseExists: func(db string) string {
		return "SELECT COUNT(*) FROM pg_catalog.pg_database WHERE datname = '" + db + "'"
	},
	CreateDatabase:  func(db string) string { return `CREATE DATABASE "` + db + `"` },
	AdminDatabase:   "postgres",
	CanCreateTables: "SELECT CASE WHEN has_schema_privilege(current_schema(), 'CREATE') THEN 1 ELSE 0 END",
}

// majorAtLeast says version's major number (before its first dot) is at
// least major; an unknown version is taken for a current one.
func majorAtLeast(version string, major int) bool {
	m, _, _ := strings.Cut(version, ".")
	n, err := strconv.Atoi(m)
	return err != nil || n >= major
}

// dialects are the dialects by name: each protocol's, named for it (the
// one place a dialect is chosen from a protocol), and those flavors of an
// existing protocol register (RegisterDialect), which their build
// descriptors name (build.Descriptor.Dialect).
var dialects = struct {
	sync.Mutex
	m map[string]Dialect
}{m: map[string]Dialect{string(MySQL): MySQLDialect, string(Postgres): PostgresDialect}}

// RegisterDialect adds d as the dialect called name, for a flavor whose
// servers speak an existing protocol with SQL of their own (a copy of the
// protocol's dialect with a field changed); unregister takes it out again
// (a test's toy flavor). A second dialect of the same name is a
// programming error.
func RegisterDialect(name string, d Dialect) (unregister func()) {
	dialects.Lock()
	defer dialects.Unlock()
	if _, dup := dialects.m[name]; dup {
		panic("client: dialect " + name + " registered twice")
	}
	dialects.m[name] = d
	return func() {
		dialects.Lock()
		defer dialects.Unlock()
		delete(dialects.m, name)
	}
}

// DialectNamed is the dialect called name (a protocol's, or one a flavor
// registered); ok is false for a name none has.
func DialectNamed(name string) (d Dialect, ok bool) {
	dialects.Lock()
	defer dialects.Unlock()
	d, ok = dialects.m[name]
	return d, ok
}

// DialectOf is protocol p's dialect; ok is false for a protocol qpslab
// does not speak.
func DialectOf(p Protocol) (d Dialect, ok bool) {
	if !slices.Contains(Protocols(), p) {
		return Dialect{}, false
	}
	return DialectNamed(string(p))
}

// Dialect is the SQL dialect of e's server (DialectOf its protocol; the
// zero Dialect for an unknown one).
func (e Endpoint) Dialect() Dialect {
	d, _ := DialectOf(e.Protocol)
	return d
}

// Protocols are the protocols with a dialect, in a fixed order: the
// servers a suite that writes its SQL through the dialect runs on.
func Protocols() []Protocol { return []Protocol{MySQL, Postgres} }
