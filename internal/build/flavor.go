package build

import (
	"context"
	"fmt"
	"strings"
)

// Flavor is a server family with its own binaries and init procedure.
type Flavor string

// The flavors qpslab knows. Each is described by a Descriptor in a file of
// its own (mariadb.go, mysql.go, postgres.go, rocksdb.go), registered in
// flavors below.
const (
	MariaDB  Flavor = "mariadb"
	MySQL    Flavor = "mysql"
	Postgres Flavor = "postgres"
	// RocksDB is a db_bench program: no server, the db_bench suite runs it.
	RocksDB Flavor = "rocksdb"
)

// Descriptor is everything that differs between flavors. The rest of
// qpslab asks a build's descriptor instead of comparing its flavor: the
// packages above this one keep what they do per flavor in a registration
// keyed by the names a descriptor gives (the client by Protocol, config by
// Family, the sandbox by Start, counters by Counters), so a flavor that
// reuses them is its descriptor alone.
type Descriptor struct {
	Flavor Flavor
	Title  string   // as messages name it: MariaDB, PostgreSQL
	Names  []string // what --flavor also takes for it
	// Protocol is the wire protocol its servers speak, a client.Protocol
	// (mysql, postgres); "" when its builds are no server but a program a
	// suite runs (rocksdb).
	Protocol string
	// Dialect names the SQL its servers take, a dialect the client knows
	// (client.DialectNamed): its protocol's (mysql, postgres), or one the
	// flavor registered (client.RegisterDialect) when its SQL differs from
	// its protocol's. The plan gives the servers it starts of the flavor
	// this dialect (targets: their protocol's). "" when it has no server.
	Dialect string
	// Family is the config family its configs are of, a config.Family
	// (mysql, postgres, rocksdb).
	Family string
	// StorageEngines says its tables take a storage engine (ENGINE=, qpslab run
	// --engine); false for a server with only one.
	StorageEngines bool
	// Start names the sandbox's procedure that makes its datadir and
	// starts and stops its server; "" for no server.
	Start string
	// Counters names the curated set of server counters a run reads (the
	// counters package's sets); "" for none.
	Counters string
	// Maven is the group:artifact of its builds on Maven Central (qpslab
	// builds fetch FLAVOR-VERSION); "" for none.
	Maven string

	// layout finds its programs under basedir: Server at least, else an
	// error that says what was looked for. FindLayout adds the bundled
	// library folders.
	layout func(f Flavor, basedir string) (Layout, error)
	// version reads the numeric version from what the server's --version
	// printed; ok is false when the banner is not this flavor's.
	version func(banner string) (ver string, ok bool)
	// readVersion, when set, reads the version itself instead of --version
	// (db_bench: a run's header where --version is missing).
	readVersion func(ctx context.Context, l Layout) (Flavor, string, string, error)
	// system, when set, is the install prefix of the flavor's Debian
	// package (the build FLAVOR-system); "" when it is not installed.
	system func() string
	// startable, when set, says what a basedir without an install script
	// lacks to make a datadir of this version.
	startable func(ver, basedir string, l Layout) error

	// short begins the default names of builds compiled from source (pg,
	// ma, my, rx: pg1518_240723_2ee061c2, as the reference names them).
	short string
	// source, when set, reads the flavor's version from a source tree; ok
	// is false when the tree is not this flavor's (compile.go).
	source func(src string) (ver string, ok bool)
	// recipe, when set, is how a source tree of the flavor compiles: its
	// steps as command lines, which Registry.Compile runs.
	recipe func(in recipeIn) recipe
	// inTree says the recipe builds inside the tree (no out-of-tree
	// build): a tree that is not qpslab's own checkout is copied into the
	// build folder first, so the user's tree is never written.
	inTree bool
	// cmake says the recipe configures with CMake, so that it takes the
	// user's --cmake-option.
	cmake bool
	// needs are the tools and headers the recipe needs installed.
	needs []need
}

// flavors are the flavors qpslab knows, in the order lists and messages
// show them. A new flavor: a file with its Descriptor, and its name here.
var flavors = []*Descriptor{&mariaDB, &mySQL, &postgres, &rocksDB}

// RegisterFlavor adds the flavor d describes after the ones qpslab knows:
// a flavor of an existing protocol whose layout, version and recipe are
// another flavor's (those it takes from the flavor Like names, which must
// be known) and whose own are its name, Title, Names, Protocol, Dialect,
// Family, StorageEngines, Start and Counters. It is for tests' toy flavors:
// unregister takes it out again. Register before anything asks for
// flavors (it is not safe beside their use); a flavor of a name already
// known is a programming error.
func RegisterFlavor(d Descriptor, like Flavor) (unregister func()) {
	if _, dup := lookup(d.Flavor); dup {
		panic("build: flavor " + string(d.Flavor) + " registered twice")
	}
	base, ok := lookup(like)
	if !ok {
		panic("build: flavor " + string(d.Flavor) + " is like an unknown flavor " + string(like))
	}
	d.layout, d.version, d.readVersion, d.system, d.startable = base.layout, base.version, base.readVersion, nil, base.startable
	d.short, d.source, d.recipe, d.inTree, d.cmake, d.needs = base.short, base.source, base.recipe, base.inTree, base.cmake, base.needs
	saved := flavors
	flavors = append(append([]*Descriptor(nil), flavors...), &d)
	return func() { flavors = saved }
}

// Flavors are the flavors qpslab knows, in the order lists show them.
func Flavors() []Flavor {
	out := make([]Flavor, len(flavors))
	for i, d := range flavors {
		out[i] = d.Flavor
	}
	return out
}

func lookup(f Flavor) (*Descriptor, bool) {
	for _, d := range flavors {
		if d.Flavor == f {
			return d, true
		}
	}
	return nil, false
}

// Describe returns f's descriptor. A flavor qpslab does not know is
// refused, not taken for another: its descriptor names it and has no
// capability (no protocol, so no server; no config family; no counters,
// no registry), and Check says why. Where a flavor comes in (a build
// record, a fleet host's builds, --flavor) it is checked first.
func (f Flavor) Describe() Descriptor {
	if d, ok := lookup(f); ok {
		return *d
	}
	return Descriptor{Flavor: f, Title: fmt.Sprintf("an unknown flavor %q", string(f))}
}

// Check is nil for a flavor qpslab knows, and otherwise the error that
// names the ones it does.
func (f Flavor) Check() error {
	if _, ok := lookup(f); ok {
		return nil
	}
	return fmt.Errorf("unknown flavor %q: %s", string(f), useKnown())
}

// useKnown is the fix for an unknown flavor: the ones qpslab knows.
func useKnown() string {
	names := make([]string, len(flavors))
	for i, d := range flavors {
		names[i] = string(d.Flavor)
	}
	return "use " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// HasServer says whether builds of the flavor are servers (a sandbox starts
// them); a rocksdb build is a program a suite runs itself.
func (f Flavor) HasServer() bool { return f.Describe().Protocol != "" }

// ParseFlavor accepts the flavor names users type.
func ParseFlavor(s string) (Flavor, error) {
	s = strings.ToLower(s)
	for _, d := range flavors {
		if s == string(d.Flavor) {
			return d.Flavor, nil
		}
		for _, n := range d.Names {
			if s == n {
				return d.Flavor, nil
			}
		}
	}
	return "", fmt.Errorf("unknown flavor %q: %s", s, useKnown())
}

// OfServer is the flavor of a server qpslab did not start, from the
// protocol it speaks and the version it reports (VERSION()): MariaDB says
// so in it; any other MySQL-protocol server (MySQL, Percona Server) is
// MySQL's.
func OfServer(protocol, version string) Flavor {
	switch {
	case protocol == string(Postgres):
		return Postgres
	case strings.Contains(strings.ToLower(version), "mariadb"):
		return MariaDB
	}
	return MySQL
}
