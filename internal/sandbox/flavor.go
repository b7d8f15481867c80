package sandbox

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/qpslab/qpslab/internal/build"
)

// flavor is a start procedure: what differs between server families in how
// a datadir is made, how the server is started, how it is told to stop, and
// how qpslab's database is created. Everything else in the lifecycle is
// shared.
type flavor interface {
	adminUser() string
	adminDatabase() string // the database an admin connection names; "" for none
	// accounts are the OS accounts the server runs as when qpslab runs as
	// root, the first the host has (serverUser): no server runs as root.
	accounts() []string
	// folders are the folders in the sandbox, beside its datadir and
	// socket folder, that the server writes in (serverFolder makes them).
	folders(s *setup) []string
	initialized(datadir string) bool
	initCommand(s *setup) (path string, args []string)
	writeConfig(s *setup) error
	serverCommand(s *setup) (path string, args []string)
	socket(s *setup) string
	stopSignal() syscall.Signal
	createDatabase(ctx context.Context, db *sql.DB, name string) error
	addrInUse(logLine string) bool
}

// starts are the start procedures, by the name a flavor's descriptor gives
// them (build.Descriptor.Start). A flavor that starts like one of these
// names it; one that starts otherwise adds its procedure here.
var starts = map[string]flavor{
	"mariadb":  mysqlFamily{normalRoot: "10.4"},
	"mysql":    mysqlFamily{selfInit: "5.7", noX: true},
	"postgres": postgres{},
}

// flavorOf is the start procedure of flavor f's servers.
func flavorOf(f build.Flavor) (flavor, error) {
	d := f.Describe()
	fl, ok := starts[d.Start]
	if !ok {
		return nil, fmt.Errorf("flavor %s names start procedure %q, which the sandbox does not have (internal/sandbox/flavor.go)", f, d.Start)
	}
	return fl, nil
}

// setup is one start attempt's resolved paths and settings.
type setup struct {
	b       build.Build
	layout  build.Layout
	cfg     []byte
	dir     string // the sandbox folder
	datadir string
	runDir  string // holds the unix socket
	port    int
	as      *runAs // nil: qpslab's own account
}

// ---- MariaDB and MySQL -----------------------------------------------------

// mysqlFamily starts MariaDB and MySQL, whose differences are its fields.
type mysqlFamily struct {
	// selfInit is the version from which the server makes its own datadir
	// (mysqld --initialize-insecure, MySQL 5.7); before it, or when "", the
	// install script does.
	selfInit string
	// normalRoot is the version from which the install script must be told
	// to give root a password login (MariaDB 10.4 made root@localhost
	// unix_socket-only); "" never.
	normalRoot string
	// noX turns the X plugin off (MySQL: else every sandbox wants port 33060).
	noX bool
}

func (mysqlFamily) adminUser() string     { return "root" }
func (mysqlFamily) adminDatabase() string { return "" }
func (mysqlFamily) accounts() []string    { return []string{"mysql", serverAccount} }
func (mysqlFamily) stopSignal() syscall.Signal {
	return syscall.SIGTERM // mysqld shuts down cleanly on SIGTERM
}

func (mysqlFamily) initialized(datadir string) bool {
	st, err := os.Stat(filepath.Join(datadir, "mysql"))
	return err == nil && st.IsDir()
}

func (mysqlFamily) socket(s *setup) string { return filepath.Join(s.runDir, "mysqld.sock") }

// tmpdir is the sandbox's own temporary folder. Two bootstraps sharing /tmp
// can collide on their temporary tables' names (seen with two
// mariadb-install-db at once: "Unknown table 'mysql.tmp_user_sys'").
func (mysqlFamily) tmpdir(s *setup) string { return filepath.Join(s.dir, "tmp") }

// files is the folder LOAD DATA INFILE and SELECT … INTO OUTFILE may use:
// the sandbox's own. A packaged server's compiled-in one (Debian's
// /var/lib/mysql-files) is not there, and MySQL refuses to start without
// it.
func (mysqlFamily) files(s *setup) string { return filepath.Join(s.dir, "files") }

func (f mysqlFamily) folders(s *setup) []string { return []string{f.tmpdir(s), f.files(s)} }

func (f mysqlFamily) initCommand(s *setup) (string, []string) {
	common := []string{"--basedir=" + s.b.Basedir, "--datadir=" + s.datadir, "--tmpdir=" + f.tmpdir(s)}
	if s.layout.Share != "" {
		common = append(common, "--lc-messages-dir="+s.layout.Share)
	}
	// MySQL 5.7 and later initialise with the server itself; older MySQL and
	// every MariaDB use the install script.
	if f.selfInit != "" && (s.b.AtLeast(f.selfInit) || s.layout.InstallDB == "") {
		return s.layout.Server, append([]string{"--no-defaults", "--initialize-insecure"}, common...)
	}
	args := append([]string{"--no-defaults", "--force"}, common...)
	if f.normalRoot != "" && s.b.AtLeast(f.normalRoot) {
		// 10.4 made root@localhost unix_socket-only; a sandbox bound to
		// loopback keeps the plain passwordless root that older servers have.
		args = append(args, "--auth-root-authentication-method=normal")
	}
	return s.layout.InstallDB, args
}

func (mysqlFamily) writeConfig(s *setup) error {
	frag := string(s.cfg)
	if !startsWithSection(frag) {
		frag = "[mysqld]\n" + frag
	}
	head := "# Written by qpslab for this sandbox: the config's effective settings.\n# Paths, port and socket are set on the command line and win over this file.\n"
	return writePrivate(filepath.Join(s.dir, "my.cnf"), []byte(head+frag), s.as)
}

func startsWithSection(frag string) bool {
	for _, l := range strings.Split(frag, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") {
			continue
		}
		return strings.HasPrefix(l, "[")
	}
	return true // empty fragment: nothing to put in a section
}

func (f mysqlFamily) serverCommand(s *setup) (string, []string) {
	args := []string{
		"--defaults-file=" + filepath.Join(s.dir, "my.cnf"), // must come first
		"--basedir=" + s.b.Basedir,
		"--datadir=" + s.datadir,
		"--tmpdir=" + f.tmpdir(s),
		"--socket=" + f.socket(s),
		"--port=" + strconv.Itoa(s.port),
		"--bind-address=127.0.0.1",
		"--pid-file=" + filepath.Join(s.runDir, "mysqld.pid"),
		"--log-error=" + filepath.Join(s.dir, "server.log"),
	}
	if s.layout.Share != "" {
		args = append(args, "--lc-messages-dir="+s.layout.Share)
	}
	if s.layout.PluginDir != "" {
		args = append(args, "--plugin-dir="+s.layout.PluginDir) // a Debian suite's server: its own plugins (MyRocks)
	}
	args = append(args, "--secure-file-priv="+f.files(s))
	if f.noX {
		args = append(args, "--loose-mysqlx=OFF") // else every sandbox wants port 33060
	}
	return s.layout.Server, args
}

func (mysqlFamily) createDatabase(ctx context.Context, db *sql.DB, name string) error {
	_, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+name+"`")
	return err
}

func (mysqlFamily) addrInUse(l string) bool {
	return strings.Contains(l, "Address already in use") || strings.Contains(l, "Do you already have another") && strings.Contains(l, "running on port")
}

// ---- PostgreSQL --------------------------------------------------------------

type postgres struct{}

func (postgres) adminUser() string       { return "postgres" }
func (postgres) adminDatabase() string   { return "postgres" }
func (postgres) accounts() []string      { return []string{"postgres", serverAccount} }
func (postgres) folders(*setup) []string { return nil }
func (postgres) stopSignal() syscall.Signal {
	return syscall.SIGINT // "fast" shutdown: roll back sessions, checkpoint, exit
}

func (postgres) initialized(datadir string) bool {
	_, err := os.Stat(filepath.Join(datadir, "PG_VERSION"))
	return err == nil
}

func (postgres) socket(s *setup) string {
	return filepath.Join(s.runDir, ".s.PGSQL."+strconv.Itoa(s.port))
}

func (postgres) initCommand(s *setup) (string, []string) {
	return s.layout.InstallDB, []string{"-D", s.datadir, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync"}
}

const pgInclude = "include_if_exists = 'qpslab.conf'"

func (postgres) writeConfig(s *setup) error {
	head := "# Written by qpslab for this sandbox: the config's effective settings.\n# Port, listen address and socket folder are set on the command line and win over this file.\n"
	// The datadir is the server account's: what is in it is written
	// afresh or opened without following a symlink.
	if err := writePrivate(filepath.Join(s.datadir, "qpslab.conf"), []byte(head+string(s.cfg)), nil); err != nil {
		return err
	}
	main := filepath.Join(s.datadir, "postgresql.conf")
	mf, err := os.OpenFile(main, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(mf)
	mf.Close()
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), pgInclude) {
		f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "\n# qpslab: the sandbox's config variant\n%s\n", pgInclude)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return chownTree(s.as, s.datadir)
}

func (postgres) serverCommand(s *setup) (string, []string) {
	return s.layout.Server, []string{"-D", s.datadir,
		"-c", "port=" + strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + s.runDir,
		"-c", "logging_collector=off",
	}
}

func (postgres) createDatabase(ctx context.Context, db *sql.DB, name string) error {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := db.ExecContext(ctx, `CREATE DATABASE "`+name+`"`)
	return err
}

func (postgres) addrInUse(l string) bool {
	return strings.Contains(l, "Address already in use") || strings.Contains(l, "could not create any TCP/IP sockets")
}
