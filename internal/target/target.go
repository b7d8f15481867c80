// Package target keeps the servers qpslab measures without starting them
// (a staging replica, a server on its own hardware, a managed database):
// each is registered once under a name, with where it listens, as whom to
// log in, and where its password is read from (an environment variable or
// a file: never the command line, the home, the store or a message), and
// checked (Check: reachable, version, flavor, privileges).
//
// qpslab works on a target only in a database of its own: one it created,
// or one that held no table when it first used it; either way it marks the
// database as its own with owned's registry (owned.Claim), and owned then
// refuses any table in it that qpslab did not create. Nothing on the
// target outside that database is written, dropped or changed.
package target

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/suite"
)

// DefaultDatabase is the database qpslab works in on a target unless the
// target names another.
const DefaultDatabase = "qpslab"

// Config is the config name of every run on a target: its label is
// NAME-VERSION.target (the server's version as it reported it), so that
// history and compare keep a target's runs apart from sandboxes' and a
// target's runs before and after an upgrade apart from each other.
const Config = "target"

// Target is one registered server.
type Target struct {
	Name     string       `yaml:"name"`
	Flavor   build.Flavor `yaml:"flavor"`
	Host     string       `yaml:"host,omitempty"`
	Port     int          `yaml:"port,omitempty"`
	Socket   string       `yaml:"socket,omitempty"`
	User     string       `yaml:"user"`
	Database string       `yaml:"database"`
	// PasswordEnv names the environment variable the password is read
	// from, PasswordFile the file (its first line); neither: no password.
	PasswordEnv  string `yaml:"password_env,omitempty"`
	PasswordFile string `yaml:"password_file,omitempty"`
	// Agent is the fleet agent that runs on the target's host, if one
	// does: a spread run's load hosts are others, and it measures the
	// server's CPU, context switches and disk over each window.
	Agent string    `yaml:"agent,omitempty"`
	Added time.Time `yaml:"added"`
}

// protocol is the wire protocol of the target's flavor.
func (t Target) protocol() client.Protocol { return client.Protocol(t.Flavor.Describe().Protocol) }

// dialect is the SQL of the target's server (client.DialectOf its
// protocol, as its endpoint's), and what its protocol's servers take to
// connect (Port, User, Schemes, SocketPort).
func (t Target) dialect() client.Dialect { return dialectOf(t.Flavor) }

// dialectOf is flavor f's protocol's dialect (the zero one for a flavor
// that is no server).
func dialectOf(f build.Flavor) client.Dialect {
	d, _ := client.DialectOf(client.Protocol(f.Describe().Protocol))
	return d
}

// Where is the target's address for messages: host:port or the socket.
func (t Target) Where() string {
	if t.Socket != "" {
		return t.Socket
	}
	return net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
}

// Password reads the target's password from its environment variable or
// file ("" where it names neither). The error names where it looked,
// never what it found.
func (t Target) Password() (string, error) {
	switch {
	case t.PasswordEnv != "":
		pw, ok := os.LookupEnv(t.PasswordEnv)
		if !ok {
			return "", fmt.Errorf("target %s reads its password from $%s, which is not set: export it (or register the target again with another --password-env or --password-file)", t.Name, t.PasswordEnv)
		}
		return pw, nil
	case t.PasswordFile != "":
		b, err := os.ReadFile(t.PasswordFile)
		if err != nil {
			return "", fmt.Errorf("target %s reads its password from %s, which cannot be read (%v): fix the file or register the target again", t.Name, t.PasswordFile, pathErr(err))
		}
		pw, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimSuffix(pw, "\r"), nil
	}
	return "", nil
}

// Endpoint is where qpslab connects to the target, as its user, in its
// database, with its password read now.
func (t Target) Endpoint() (client.Endpoint, error) {
	pw, err := t.Password()
	if err != nil {
		return client.Endpoint{}, err
	}
	port := t.Port
	if p, ok := t.dialect().SocketPort(t.Socket); t.Socket != "" && ok && p > 0 {
		port = p // PostgreSQL's driver names the socket by its folder and port
	}
	return client.Endpoint{Protocol: t.protocol(), Host: t.Host, Port: port, Socket: t.Socket,
		User: t.User, Database: t.Database, Password: pw}, nil
}

// Spec is what `qpslab targets add` was given.
type Spec struct {
	Name, Flavor, DSN, Host, Socket, User, Database string
	Port                                            int
	PortSet                                         bool
	PasswordEnv, PasswordFile                       string
	Agent                                           string
}

const (
	maxName  = 64
	maxField = 255
)

var (
	nameRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_+-]*$`)
	databaseRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)
	envRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	agentRE    = regexp.MustCompile(`^[a-z0-9]+(?:[_-][a-z0-9]+)*$`) // as fleet.ValidName
)

// ValidName checks a target's name: letters, digits and _ + - (no dot: the
// name starts the runs' labels, NAME-VERSION.target), at most 64.
func ValidName(name string) error {
	if len(name) > maxName {
		return fmt.Errorf("target name %.20q… is %d characters long: use at most %d (e.g. staging)", name, len(name), maxName)
	}
	if !nameRE.MatchString(name) {
		return fmt.Errorf("target name %q is not valid: use letters, digits and _ + - (e.g. staging)", name)
	}
	return nil
}

// New checks a Spec and makes the target it describes; every problem is
// one line naming the flag and the fix.
func New(s Spec) (Target, error) {
	if err := ValidName(s.Name); err != nil {
		return Target{}, err
	}
	t := Target{Name: s.Name, Host: s.Host, Port: s.Port, Socket: s.Socket, User: s.User, Database: s.Database,
		PasswordEnv: s.PasswordEnv, PasswordFile: s.PasswordFile, Agent: s.Agent}
	switch f := build.Flavor(s.Flavor); {
	case s.Flavor == "":
		return Target{}, fmt.Errorf("name the server's flavor with --flavor: mariadb, mysql or postgres")
	case !f.HasServer():
		return Target{}, fmt.Errorf("--flavor %s: a target is a mariadb, mysql or postgres server", quote(s.Flavor))
	default:
		t.Flavor = f
	}
	given := 0
	for _, v := range []string{s.DSN, s.Host, s.Socket} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return Target{}, fmt.Errorf("say where the server listens with one of --dsn, --host (with --port) or --socket")
	}
	if s.DSN != "" {
		d, err := parseDSN(s.DSN, t.Flavor)
		if err != nil {
			return Target{}, err
		}
		if s.PortSet || s.User != "" || s.Database != "" {
			return Target{}, fmt.Errorf("--dsn holds the host, port, user and database: leave out --port, --user and --database")
		}
		t.Host, t.Port, t.User, t.Database = d.Host, d.Port, d.User, d.Database
	}
	if s.Socket != "" && s.PortSet {
		return Target{}, fmt.Errorf("--port goes with --host: a --socket needs none")
	}
	if t.Host != "" && t.Port == 0 {
		t.Port = t.dialect().Port
	}
	if t.User == "" {
		t.User = t.dialect().User
	}
	if t.Database == "" {
		t.Database = DefaultDatabase
	}
	if s.PasswordEnv != "" && s.PasswordFile != "" {
		return Target{}, fmt.Errorf("--password-env and --password-file exclude each other: give one")
	}
	if err := t.valid(); err != nil {
		return Target{}, err
	}
	if t.PasswordFile != "" {
		abs, err := filepath.Abs(t.PasswordFile)
		if err != nil {
			return Target{}, fmt.Errorf("--password-file %s: %v", quote(t.PasswordFile), err)
		}
		t.PasswordFile = abs
		if _, err := t.Password(); err != nil {
			return Target{}, err
		}
	}
	return t, nil
}

// valid checks every field of t for what a connection and a file name can
// take: a stored target is checked again when it is read.
func (t Target) valid() error {
	if err := ValidName(t.Name); err != nil {
		return err
	}
	if !t.Flavor.HasServer() {
		return fmt.Errorf("target %s has flavor %s, which is no server: register it again with --flavor mariadb, mysql or postgres", t.Name, quote(string(t.Flavor)))
	}
	for _, f := range []struct{ flag, v string }{{"--host", t.Host}, {"--socket", t.Socket}, {"--user", t.User}, {"--password-file", t.PasswordFile}} {
		if len(f.v) > maxField {
			return fmt.Errorf("%s is %d characters long: use at most %d", f.flag, len(f.v), maxField)
		}
		if i := strings.IndexFunc(f.v, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }); i >= 0 {
			return fmt.Errorf("%s %s holds a control character: give it as plain text", f.flag, quote(f.v))
		}
	}
	if t.Host != "" && (strings.ContainsAny(t.Host, " /@?#") || strings.HasPrefix(t.Host, "-")) {
		return fmt.Errorf("--host %s is not a host name or address", quote(t.Host))
	}
	if t.Host != "" && (t.Port < 1 || t.Port > 65535) {
		return fmt.Errorf("--port %d: give a TCP port from 1 to 65535", t.Port)
	}
	if t.Socket != "" && !filepath.IsAbs(t.Socket) {
		return fmt.Errorf("--socket %s: give the socket's absolute path", quote(t.Socket))
	}
	if _, ok := t.dialect().SocketPort(t.Socket); t.Socket != "" && !ok {
		// Only PostgreSQL's driver needs the port in the socket's name.
		return fmt.Errorf("--socket %s: give PostgreSQL's socket file, named for its port (e.g. /var/run/postgresql/.s.PGSQL.5432)", quote(t.Socket))
	}
	if t.User == "" || strings.ContainsAny(t.User, " '\"`\\") {
		return fmt.Errorf("--user %s: give the account's name (no spaces or quotes)", quote(t.User))
	}
	if !databaseRE.MatchString(t.Database) {
		return fmt.Errorf("--database %s: give a plain database name (letters, digits and _, at most 63), e.g. %s", quote(t.Database), DefaultDatabase)
	}
	if t.Agent != "" && (len(t.Agent) > 40 || !agentRE.MatchString(t.Agent)) {
		return fmt.Errorf("--agent %s: give the name of the fleet agent on the server's host (qpslab fleet hosts lists them)", quote(t.Agent))
	}
	if t.PasswordEnv != "" && (!envRE.MatchString(t.PasswordEnv) || len(t.PasswordEnv) > maxField) {
		return fmt.Errorf("--password-env %s: give the name of an environment variable (letters, digits and _), not the password", quote(t.PasswordEnv))
	}
	return nil
}

type dsn struct {
	Host, User, Database string
	Port                 int
}

// parseDSN reads mysql://user@host:port/db or postgres://user@host:port/db.
// A password in it is refused (it would sit in the shell's history and
// the process list), and so is any parameter: qpslab sets its own
// connection options, and a parameter it would drop silently (sslmode,
// tls) would make the user believe the connection has it.
func parseDSN(s string, f build.Flavor) (dsn, error) {
	if len(s) > 2*maxField {
		return dsn{}, fmt.Errorf("--dsn is %d characters long: use at most %d", len(s), 2*maxField)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return dsn{}, fmt.Errorf("--dsn holds a control character: give it as plain text")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return dsn{}, fmt.Errorf("--dsn is not a URL like %s://USER@HOST:PORT/DATABASE: give one of that form", scheme(f))
	}
	want := dialectOf(f).Schemes
	if !slices.Contains(want, u.Scheme) {
		return dsn{}, fmt.Errorf("--dsn starts with %s:// and the flavor is %s: give a %s:// URL, or another --flavor", quote(u.Scheme), f, want[0])
	}
	if _, has := u.User.Password(); has {
		return dsn{}, fmt.Errorf("--dsn holds a password: qpslab never takes one on the command line; leave it out and give --password-env VAR (an environment variable) or --password-file PATH")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		var names []string
		for k := range u.Query() {
			names = append(names, k)
		}
		sort.Strings(names)
		return dsn{}, fmt.Errorf("--dsn has parameters (%s), which qpslab does not take: give only %s://USER@HOST:PORT/DATABASE (qpslab connects without TLS)", strings.Join(names, ", "), want[0])
	}
	d := dsn{Host: u.Hostname(), User: u.User.Username(), Database: strings.TrimPrefix(u.Path, "/")}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return dsn{}, fmt.Errorf("--dsn's port %s: give a TCP port from 1 to 65535", quote(p))
		}
		d.Port = n
	}
	return d, nil
}

// scheme is the usual URL scheme of a DSN of flavor f's servers.
func scheme(f build.Flavor) string { return dialectOf(f).Schemes[0] }

// quote is s as a message shows it: quoted, control characters escaped,
// long ones cut.
func quote(s string) string {
	if len(s) > 60 {
		return suite.Quote(s[:60]) + "…"
	}
	return suite.Quote(s)
}

func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ---- the registry: one YAML file per target under the home ---------------

func dir(h home.Home) string { return filepath.Join(h.Root, "targets") }

func file(h home.Home, name string) string { return filepath.Join(dir(h), name+".yaml") }

// Add registers t; a target of that name is replaced only with replace.
func Add(h home.Home, t Target, replace bool) error {
	if err := t.valid(); err != nil {
		return err
	}
	if _, err := os.Stat(file(h, t.Name)); err == nil && !replace {
		return fmt.Errorf("target %s is registered already: give --replace to register it anew, or another name", t.Name)
	}
	if err := os.MkdirAll(dir(h), 0o700); err != nil {
		return fmt.Errorf("create %s: %v", dir(h), pathErr(err))
	}
	t.Added = time.Now().UTC().Truncate(time.Second)
	b, err := yaml.Marshal(t)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(file(h, t.Name), b, 0o600); err != nil {
		return fmt.Errorf("write %s: %v", file(h, t.Name), pathErr(err))
	}
	return nil
}

// Get reads the target registered as name.
func Get(h home.Home, name string) (Target, error) {
	if err := ValidName(name); err != nil {
		return Target{}, err
	}
	b, err := os.ReadFile(file(h, name))
	if errors.Is(err, fs.ErrNotExist) {
		return Target{}, fmt.Errorf("no target named %s: register it with qpslab targets add (see qpslab targets list)", name)
	}
	if err != nil {
		return Target{}, fmt.Errorf("read target %s: %v", name, pathErr(err))
	}
	var t Target
	if err := yaml.Unmarshal(b, &t); err != nil {
		return Target{}, fmt.Errorf("target %s's file %s is damaged (%v): register it again with qpslab targets add --replace", name, file(h, name), err)
	}
	if t.Name != name {
		return Target{}, fmt.Errorf("target file %s names %q: register the target again with qpslab targets add --replace", file(h, name), t.Name)
	}
	if err := t.valid(); err != nil {
		return Target{}, fmt.Errorf("target %s: %w", name, err)
	}
	return t, nil
}

// List reads every registered target, by name.
func List(h home.Home) ([]Target, error) {
	ents, err := os.ReadDir(dir(h))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %v", dir(h), pathErr(err))
	}
	var out []Target
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".yaml")
		if !ok || e.IsDir() {
			continue
		}
		t, err := Get(h, name)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Remove forgets the target: nothing on the server is touched (its
// qpslab database stays, with the tables qpslab made).
func Remove(h home.Home, name string) (Target, error) {
	t, err := Get(h, name)
	if err != nil {
		return t, err
	}
	return t, os.Remove(file(h, name))
}
