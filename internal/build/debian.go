package build

// Builds from Debian's suites: a server of another Debian release than the
// host's (MariaDB 10.5 from bullseye, 11.8 from trixie, MySQL 9.7 from
// unstable), downloaded by apt-get with a state of its own under qpslab's
// cache (its own sources list, package lists, archives and an empty dpkg
// status: the system's apt configuration and dpkg database are not
// touched), apt checking each suite's signature against the host's Debian
// keyring and each package against the signed index. The server package
// and its runtime closure (what it depends on in the same suite) are
// extracted with dpkg -x into the build's folder, the suite's C library
// into a runtime folder of its own. The server runs on the host's C
// library where it can, and otherwise through its suite's own loader,
// decided by trying its --version: a launcher then takes the server's
// place.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// DebianSuites are the suites qpslab fetches servers from, oldest first.
var DebianSuites = []string{"bullseye", "bookworm", "trixie", "unstable"}

// debianKeyring is the keyring apt checks the suites' signatures with (the
// host's debian-archive-keyring package).
const debianKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// debianServer is what a flavor's server is in Debian: its package (one
// per release line in older suites: mariadb-server-core-10.5), its client
// programs' package of the same version (the install script's
// my_print_defaults, mysqladmin), each by its name's stem, the server's
// binary under usr/, and the plugins of the same version fetched with it
// where the suite has them (MariaDB's MyRocks, which Debian ships apart
// as mariadb-plugin-rocksdb).
type debianServer struct {
	server, client string
	binary         string
	plugins        []string
}

var debianServers = map[Flavor]debianServer{
	MySQL:   {"mysql-server-core", "mysql-client-core", "sbin/mysqld", nil},
	MariaDB: {"mariadb-server-core", "mariadb-client-core", "sbin/mariadbd", []string{"mariadb-plugin-rocksdb"}},
}

// stemRE matches a package named stem, or stem-SERIES.
func stemRE(stem string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(stem) + `(-\d+(\.\d+)*)?$`)
}

// notRuntime are packages a server package depends on that the server
// itself does not load: the interpreters and tools of its maintainer
// scripts and helper scripts (perl alone is 60 MB).
var notRuntime = regexp.MustCompile(`^(perl|perl-base|perl-modules-.*|libperl.*|debconf.*|dpkg|adduser|passwd|init-system-helpers|lsb-base|sensible-utils)$`)

// debianVersionRE splits a Debian version into its epoch, upstream version
// and revision (1:10.11.14-0+deb12u2).
var debianVersionRE = regexp.MustCompile(`^(?:\d+:)?([0-9][^-]*?)(?:[+~][^-]*)?(?:-[^-]*)?$`)

// Upstream is the upstream version of a Debian version: 1:10.11.14-0+deb12u2
// is 10.11.14, 9.7.4-2 is 9.7.4.
func Upstream(debVersion string) string {
	if m := debianVersionRE.FindStringSubmatch(debVersion); m != nil {
		return m[1]
	}
	return debVersion
}

// apt is apt-get and apt-cache on one suite with a state of their own:
// its binary packages, or with src its source packages (a state of its
// own, so that a fetch of a server does not read the suite's source lists).
type apt struct {
	dir, suite, mirror string
	src                bool
}

// aptFor is the private apt state of suite under the cache.
func (r Registry) aptFor(suite, mirror string) apt {
	if mirror == "" {
		mirror = debianMirror()
	}
	return apt{dir: filepath.Join(r.Cache, "apt", suite), suite: suite, mirror: strings.TrimRight(mirror, "/")}
}

// debianMirror is the Debian mirror the host's own sources name (one-line
// or deb822 format), else deb.debian.org.
func debianMirror() string {
	var text []byte
	for _, pat := range []string{"/etc/apt/sources.list", "/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			b, _ := os.ReadFile(f)
			text = append(append(text, b...), '\n')
		}
	}
	re := regexp.MustCompile(`(?m)^(?:deb\s+(?:\[[^]]*\]\s+)?|URIs:\s*)(https?://\S+/debian)/?\s`)
	for _, m := range re.FindAllSubmatch(text, -1) {
		if u := string(m[1]); !strings.Contains(u, "security") {
			return u
		}
	}
	return "http://deb.debian.org/debian"
}

func (a apt) args() []string {
	return []string{"-q",
		"-o", "Dir::Etc::SourceList=" + filepath.Join(a.dir, "sources.list"), "-o", "Dir::Etc::SourceParts=-",
		"-o", "Dir::State::Lists=" + filepath.Join(a.dir, "lists"), "-o", "Dir::Cache=" + filepath.Join(a.dir, "cache"),
		"-o", "Dir::State::status=" + filepath.Join(a.dir, "status"), "-o", "Debug::NoLocking=1",
		"-o", "APT::Sandbox::User=root", "-o", "APT::Architecture=" + debianArch(),
	}
}

// debianArch is the host's Debian architecture name.
func debianArch() string {
	if a, err := hostArch(); err == nil && a == "aarch64" {
		return "arm64"
	}
	return "amd64"
}

// run runs apt-get or apt-cache with the state's options; the output, and
// the error with its last line.
func (a apt) run(ctx context.Context, dir, tool string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, tool, append(a.args(), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := lastErrorLine(errb.Bytes())
		if msg == "" {
			msg = err.Error()
		}
		return out.Bytes(), errors.New(msg)
	}
	return out.Bytes(), nil
}

// listsMaxAge is how old a suite's package lists may be before a fetch
// reads them again.
const listsMaxAge = 24 * time.Hour

// update makes the suite's package lists current (apt-get update, checking
// the suite's signature), at most once in listsMaxAge.
func (a apt) update(ctx context.Context, logf func(string, ...any)) error {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("fetching from Debian needs apt-get, which this host lacks: fetch from Maven or a tarball instead")
	}
	stamp := filepath.Join(a.dir, "updated")
	if st, err := os.Stat(stamp); err == nil && time.Since(st.ModTime()) < listsMaxAge {
		return nil
	}
	for _, d := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(a.dir, d), 0o755); err != nil {
			return fmt.Errorf("create the apt state of %s: %w", a.suite, err)
		}
	}
	kind := "deb"
	if a.src {
		kind = "deb-src"
	}
	src := fmt.Sprintf("%s [signed-by=%s] %s %s main\n", kind, debianKeyring, a.mirror, a.suite)
	if err := os.WriteFile(filepath.Join(a.dir, "sources.list"), []byte(src), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(a.dir, "status"), nil, 0o644); err != nil {
		return err
	}
	logf("reading Debian %s's package lists from %s", a.suite, a.mirror)
	if _, err := a.run(ctx, a.dir, "apt-get", "update"); err != nil {
		if strings.Contains(err.Error(), "NO_PUBKEY") || strings.Contains(err.Error(), "not signed") {
			return fmt.Errorf("Debian %s is signed by a key this host's keyring (%s) lacks: install a newer debian-archive-keyring, or fetch from another source", a.suite, debianKeyring)
		}
		if st, serr := os.Stat(stamp); serr == nil && ctx.Err() == nil {
			// Offline: the lists read last time still name what was there.
			logf("Debian %s's package lists could not be read again (%v): using those of %s", a.suite, err, st.ModTime().UTC().Format("2006-01-02 15:04"))
			return nil
		}
		return fmt.Errorf("read Debian %s's package lists from %s: %v (fix: check the network, or name a reachable mirror with --mirror)", a.suite, a.mirror, err)
	}
	return os.WriteFile(stamp, nil, 0o644)
}

// DebianPick is a server package of one of Debian's suites.
type DebianPick struct {
	Suite, Package, Version string // Version: Debian's (1:10.5.23-0+deb11u1)
}

// Upstream is the pick's upstream version.
func (p DebianPick) Upstream() string { return Upstream(p.Version) }

// servers lists the suite's packages of flavor f's server, with their
// versions.
func (a apt) servers(ctx context.Context, f Flavor) ([]DebianPick, error) {
	ds, ok := debianServers[f]
	if !ok {
		return nil, nil
	}
	return a.packages(ctx, ds.server)
}

// packages lists the suite's packages named stem or stem-SERIES, with
// their versions.
func (a apt) packages(ctx context.Context, stem string) ([]DebianPick, error) {
	re := stemRE(stem)
	out, err := a.run(ctx, a.dir, "apt-cache", "search", "--names-only", "^"+regexp.QuoteMeta(stem))
	if err != nil {
		return nil, fmt.Errorf("search Debian %s: %v", a.suite, err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, _, ok := strings.Cut(line, " - "); ok && re.MatchString(name) {
			names = append(names, name)
		}
	}
	var picks []DebianPick
	for _, n := range names {
		show, err := a.run(ctx, a.dir, "apt-cache", "show", n)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(show))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "Version: "); ok {
				picks = append(picks, DebianPick{Suite: a.suite, Package: n, Version: strings.TrimSpace(v)})
			}
		}
	}
	return picks, nil
}

// DebianAvailable lists the servers of flavor f in every suite (reading
// the suites' lists first where they are older than a day).
func (r Registry) DebianAvailable(ctx context.Context, f Flavor, mirror string, logf func(string, ...any)) ([]DebianPick, error) {
	var all []DebianPick
	for _, s := range DebianSuites {
		a := r.aptFor(s, mirror)
		if err := a.update(ctx, logf); err != nil {
			return nil, err
		}
		picks, err := a.servers(ctx, f)
		if err != nil {
			return nil, err
		}
		all = append(all, picks...)
	}
	return all, nil
}

// DebianNewest is the newest version of flavor f's server any suite has.
func (r Registry) DebianNewest(ctx context.Context, f Flavor, logf func(string, ...any)) (DebianPick, error) {
	picks, err := r.DebianAvailable(ctx, f, "", logf)
	if err != nil {
		return DebianPick{}, err
	}
	if len(picks) == 0 {
		return DebianPick{}, fmt.Errorf("Debian's suites (%s) have no %s server", strings.Join(DebianSuites, ", "), f)
	}
	newest := picks[0]
	for _, p := range picks[1:] {
		if CompareVersions(p.Upstream(), newest.Upstream()) > 0 {
			newest = p
		}
	}
	return newest, nil
}

// debianFind is the newest suite's package of f's server at version (an
// upstream version: 9.7.4), and the versions the suites have where none
// is.
func (r Registry) debianFind(ctx context.Context, f Flavor, version, mirror string, logf func(string, ...any)) (DebianPick, []string, error) {
	picks, err := r.DebianAvailable(ctx, f, mirror, logf)
	if err != nil {
		return DebianPick{}, nil, err
	}
	var have []string
	for i := len(picks) - 1; i >= 0; i-- { // the newest suite first
		if sameRelease(version, picks[i].Upstream()) {
			return picks[i], nil, nil
		}
	}
	for _, p := range picks {
		have = append(have, p.Upstream()+" ("+p.Suite+")")
	}
	sort.Strings(have)
	return DebianPick{}, slices.Compact(have), nil
}

// closure is the packages pick needs to run, from its suite: pick's, its
// client programs' package of the same version, and what they depend on,
// recursively, but the tools of maintainer scripts
// (notRuntime) and virtual packages.
func (a apt) closure(ctx context.Context, pick DebianPick, client string, plugins []string) ([]string, error) {
	top := []string{pick.Package}
	if clients, err := a.packages(ctx, client); err == nil {
		for _, c := range clients {
			if c.Upstream() == pick.Upstream() {
				top = append(top, c.Package) // the install script's my_print_defaults is a client program
				break
			}
		}
	}
	// A plugin of the server's version, and the libraries it loads (not
	// what its package depends on beside them: the whole server package,
	// and its helper scripts' python3).
	var pluginPkgs []string
	for _, stem := range plugins {
		ps, err := a.packages(ctx, stem)
		if err != nil {
			continue
		}
		for _, p := range ps {
			if p.Upstream() == pick.Upstream() {
				pluginPkgs = append(pluginPkgs, p.Package)
				break
			}
		}
	}
	for _, p := range pluginPkgs {
		out, err := a.run(ctx, a.dir, "apt-cache", "depends", "--no-recommends", "--no-suggests", "--no-conflicts",
			"--no-breaks", "--no-replaces", "--no-enhances", "--no-pre-depends", p)
		if err != nil {
			return nil, fmt.Errorf("resolve what %s needs in Debian %s: %v", p, a.suite, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if dep, ok := strings.CutPrefix(strings.TrimSpace(line), "Depends: "); ok && strings.HasPrefix(dep, "lib") && !strings.HasPrefix(dep, "<") {
				top = append(top, dep)
			}
		}
	}
	out, err := a.run(ctx, a.dir, "apt-cache", append([]string{"depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
		"--no-breaks", "--no-replaces", "--no-enhances", "--no-pre-depends"}, top...)...)
	if err != nil {
		return nil, fmt.Errorf("resolve what %s needs in Debian %s: %v", pick.Package, a.suite, err)
	}
	seen := map[string]bool{}
	var pkgs []string
	for _, line := range strings.Split(string(out), "\n") {
		name := strings.TrimSpace(line)
		if name == "" || strings.HasPrefix(line, " ") || strings.HasPrefix(name, "<") || notRuntime.MatchString(name) || seen[name] {
			continue
		}
		seen[name] = true
		pkgs = append(pkgs, name)
	}
	return append(pkgs, pluginPkgs...), nil
}

// debianMark is what a fetched Debian build's folder records.
type debianMark struct {
	Source   string   `yaml:"source"` // debian
	Suite    string   `yaml:"suite"`
	Package  string   `yaml:"package"`
	Version  string   `yaml:"version"`  // Debian's
	Packages []string `yaml:"packages"` // the closure extracted
	SHA256   string   `yaml:"sha256"`   // of the server package
	Loader   bool     `yaml:"loader"`   // runs through its suite's own loader
	Form     int      `yaml:"form"`     // debianForm when it was made
}

// debianForm is how a fetched Debian build is laid out now: a folder made
// another way is made again (2: the client package too, every program with
// a launcher; 3: MariaDB's MyRocks plugin of the same version too).
const debianForm = 3

// debianRuntime are the packages whose files go into the runtime folder
// rather than the build's prefix: the C library and its loader, which a
// server that runs on the host's C library must not see.
var debianRuntime = map[string]bool{"libc6": true}

// fetchDebian is Fetch from Debian's suites: spec is FLAVOR-VERSION.
func (r Registry) fetchDebian(ctx context.Context, f Flavor, version string, o FetchOptions) (Build, error) {
	logf := o.logf
	if _, ok := debianServers[f]; !ok {
		return Build{}, fmt.Errorf("qpslab fetches MySQL and MariaDB servers from Debian, not %s: fetch %s from Maven (postgres-VERSION)", f, f)
	}
	name := o.Name
	if name == "" {
		name = string(f) + "-" + version
	}
	if err := ValidName(name); err != nil {
		return Build{}, err
	}
	buildsDir, unlock, err := r.lockBuilds(ctx)
	if err != nil {
		return Build{}, err
	}
	defer unlock()
	pick, have, err := r.debianFind(ctx, f, version, o.Mirror, logf)
	if err != nil {
		return Build{}, err
	}
	if pick.Package == "" {
		return Build{}, fmt.Errorf("Debian's suites (%s) have no %s %s: they have %s", strings.Join(DebianSuites, ", "), f, version, strings.Join(have, ", "))
	}
	dest := filepath.Join(buildsDir, "debian-"+pick.Suite+"-"+pick.Package+"-"+Upstream(pick.Version))
	var m debianMark
	raw, err := os.ReadFile(filepath.Join(dest, completeMark))
	if err != nil || yaml.Unmarshal(raw, &m) != nil || m.Version != pick.Version || m.Form != debianForm {
		if m, err = r.aptFor(pick.Suite, o.Mirror).unpack(ctx, f, pick, dest, logf); err != nil {
			os.RemoveAll(dest)
			return Build{}, err
		}
		raw, _ := yaml.Marshal(m)
		if err := os.WriteFile(filepath.Join(dest, completeMark), raw, 0o644); err != nil {
			os.RemoveAll(dest)
			return Build{}, fmt.Errorf("mark %s complete: %w", dest, err)
		}
	} else {
		logf("%s %s from Debian %s is in the cache: %s", pick.Package, pick.Version, pick.Suite, dest)
	}
	basedir := filepath.Join(dest, "root", "usr")
	_, got, ver, banner, err := Inspect(ctx, f, basedir)
	if err != nil {
		return Build{}, fmt.Errorf("fetched %s %s from Debian %s: %w", pick.Package, pick.Version, pick.Suite, err)
	}
	if !sameRelease(version, ver) {
		return Build{}, fmt.Errorf("fetched %s %s from Debian %s but its server reports %s %s", pick.Package, pick.Version, pick.Suite, got, ver)
	}
	b := Build{Name: name, Flavor: got, Version: ver, Banner: banner, Basedir: basedir, Source: "debian",
		Artifact: fmt.Sprintf("%s %s (Debian %s)", pick.Package, pick.Version, pick.Suite), SHA256: m.SHA256, Added: time.Now().UTC()}
	if m.Loader {
		b.Runtime = "Debian " + pick.Suite + "'s C library, through its loader (" + filepath.Join(dest, "runtime") + ")"
	}
	if err := r.save(b, o.Replace); err != nil {
		return Build{}, err
	}
	if m.Loader {
		logf("%s runs on Debian %s's own C library (this host's is older): its launcher is %s", name, pick.Suite, filepath.Join(basedir, debianServers[f].binary))
	}
	return b, nil
}

// unpack downloads pick (of a's suite) and its closure and extracts them
// into dest: dest/root the prefix (root/usr the build's basedir),
// dest/runtime the C library; then decides how the server runs.
func (a apt) unpack(ctx context.Context, f Flavor, pick DebianPick, dest string, logf func(string, ...any)) (debianMark, error) {
	pkgs, err := a.closure(ctx, pick, debianServers[f].client, debianServers[f].plugins)
	if err != nil {
		return debianMark{}, err
	}
	debs := filepath.Join(a.dir, "debs")
	os.RemoveAll(debs)
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return debianMark{}, err
	}
	defer os.RemoveAll(debs)
	logf("downloading %s %s and the %d package(s) it needs from Debian %s", pick.Package, pick.Version, len(pkgs)-1, pick.Suite)
	if _, err := a.run(ctx, debs, "apt-get", append([]string{"download"}, pkgs...)...); err != nil {
		return debianMark{}, fmt.Errorf("download %s from Debian %s: %v", pick.Package, pick.Suite, err)
	}
	os.RemoveAll(dest)
	root, runtime := filepath.Join(dest, "root"), filepath.Join(dest, "runtime")
	files, _ := filepath.Glob(filepath.Join(debs, "*.deb"))
	m := debianMark{Source: "debian", Suite: pick.Suite, Package: pick.Package, Version: pick.Version, Packages: pkgs, Form: debianForm}
	for _, deb := range files {
		pkg, _, _ := strings.Cut(filepath.Base(deb), "_")
		into := root
		if debianRuntime[pkg] {
			into = runtime
		}
		if err := os.MkdirAll(into, 0o755); err != nil {
			return m, err
		}
		if out, err := exec.CommandContext(ctx, "dpkg", "-x", deb, into).CombinedOutput(); err != nil {
			return m, fmt.Errorf("extract %s: %v: %s", filepath.Base(deb), err, lastErrorLine(out))
		}
		if pkg == pick.Package {
			if m.SHA256, err = fileSHA256(deb); err != nil {
				return m, err
			}
		}
	}
	m.Loader, err = launch(ctx, filepath.Join(root, "usr"), runtime, debianServers[f].binary)
	return m, err
}

// multiarch are the library folders of a Debian prefix.
func multiarch(prefix string) []string {
	var dirs []string
	for _, d := range []string{"usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib/aarch64-linux-gnu"} {
		if p := firstDir(prefix, d); p != "" {
			dirs = append(dirs, p)
		}
	}
	return dirs
}

// launch decides how the server at basedir/binary runs, by trying its
// --version: on the host's C library with its suite's other libraries
// (what FindLayout puts on LD_LIBRARY_PATH), or else through the loader of
// the suite's C library in runtime. Then a launcher takes the place of each
// program in bin/ and sbin/ (the server and what the install script runs:
// my_print_defaults, resolveip), each renamed beside it (.debian). It says
// whether the loader is used.
func launch(ctx context.Context, basedir, runtime, binary string) (bool, error) {
	server := filepath.Join(basedir, binary)
	libs := multiarch(filepath.Dir(basedir))
	try := func(name string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = Layout{LibDirs: libs}.Env(os.Environ())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	direct, err := try(server, "--version")
	if err == nil && strings.Contains(direct, "Ver") {
		return false, nil
	}
	loaders, _ := filepath.Glob(filepath.Join(runtime, "usr/lib/*-linux-gnu/ld-linux-*.so.*"))
	if len(loaders) == 0 {
		return false, fmt.Errorf("%s does not run on this host's libraries (%s), and its suite's C library has no loader to run it with", filepath.Base(server), firstLine(direct))
	}
	path := strings.Join(append(multiarch(runtime), libs...), ":")
	viaLoader, err := try(loaders[0], "--library-path", path, server, "--version")
	if err != nil || !strings.Contains(viaLoader, "Ver") {
		return false, fmt.Errorf("%s runs neither on this host's libraries (%s) nor on its suite's own (%s)", filepath.Base(server), firstLine(direct), firstLine(viaLoader))
	}
	for _, dir := range []string{"bin", "sbin"} {
		ents, _ := os.ReadDir(filepath.Join(basedir, dir))
		for _, e := range ents {
			prog := filepath.Join(basedir, dir, e.Name())
			if !e.Type().IsRegular() || !isELF(prog) {
				continue // a script runs the programs beside it, which have launchers
			}
			if err := launcher(prog, loaders[0], path); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// isELF says whether p is an ELF executable.
func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	_, err = f.Read(magic)
	return err == nil && string(magic) == "\x7fELF"
}

// launcher renames prog (to prog.debian) and writes in its place a script
// that starts it through loader with its suite's libraries (path), under
// its own name (--argv0: a server finds its basedir from it).
func launcher(prog, loader, path string) error {
	real := prog + ".debian"
	if err := os.Rename(prog, real); err != nil {
		return err
	}
	script := fmt.Sprintf("#!/bin/sh\n# qpslab: %s needs a newer C library than this host's: it runs through\n# the loader of its Debian suite's own (decided by trying it).\nexec '%s' --library-path '%s' --argv0 \"$0\" '%s' \"$@\"\n",
		filepath.Base(prog), loader, path, real)
	return os.WriteFile(prog, []byte(script), 0o755)
}

// debianSourceRE is a source package at a version: NAME=VERSION.
var debianSourceRE = regexp.MustCompile(`^([a-z0-9][a-z0-9.+-]+)=([0-9][A-Za-z0-9.+~:-]*)$`)

// DebianSource downloads Debian suite's source package spec (NAME=VERSION,
// postgresql-15=15.18-0+deb12u1) into dir, through a private apt state of
// the suite's deb-src lists under the cache (apt checks the suite's
// signature and each file's checksum; the host's apt configuration is not
// touched), once: a dir that holds its upstream tarball already is not
// fetched again. It returns that tarball's path (NAME_UPSTREAM.orig.tar.*),
// the tree a compile or a bisection's repository starts from. Of o, it
// reads the Mirror and the Log, as a fetch from Debian does.
func (r Registry) DebianSource(ctx context.Context, suite, spec, dir string, o FetchOptions) (string, error) {
	mirror, logf := o.Mirror, o.logf
	m := debianSourceRE.FindStringSubmatch(spec)
	if m == nil {
		return "", fmt.Errorf("source package %q: give NAME=VERSION as Debian spells them (e.g. postgresql-15=15.18-0+deb12u1)", spec)
	}
	if !slices.Contains(DebianSuites, suite) {
		return "", fmt.Errorf("--suite %q: name one of Debian's suites (%s)", suite, strings.Join(DebianSuites, ", "))
	}
	glob := filepath.Join(dir, m[1]+"_"+regexp.QuoteMeta(Upstream(m[2]))+".orig.tar.*")
	if got, _ := filepath.Glob(glob); len(got) > 0 {
		return got[0], nil
	}
	a := r.aptFor(suite, mirror)
	a.dir, a.src = a.dir+"-src", true
	if err := a.update(ctx, logf); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	logf("downloading Debian %s's source package %s into %s", suite, spec, dir)
	if _, err := a.run(ctx, dir, "apt-get", "source", "--download-only", spec); err != nil {
		// A mirror may hold a package's upstream tarball but not its .dsc
		// (a proxy that keeps part of the pool): apt-get source then fails
		// on the .dsc, and the tarball is fetched alone.
		if !strings.Contains(err.Error(), ".dsc") {
			return "", fmt.Errorf("apt-get source %s from Debian %s: %v", spec, suite, err)
		}
		logf("apt-get source %s failed on its .dsc (%v): fetching the upstream tarball alone, checked against Debian %s's signed Sources index", spec, err, suite)
		if ferr := a.origTarball(ctx, m[1], m[2], dir, logf); ferr != nil {
			return "", fmt.Errorf("apt-get source %s from Debian %s: %v; and its upstream tarball alone: %v", spec, suite, err, ferr)
		}
	}
	got, _ := filepath.Glob(glob)
	if len(got) == 0 {
		return "", fmt.Errorf("Debian %s's source package %s has no upstream tarball (%s_%s.orig.tar.*): it is a native package", suite, spec, m[1], Upstream(m[2]))
	}
	return got[0], nil
}

// origTarball downloads the upstream tarball (NAME_UPSTREAM.orig.tar.*)
// of source package name at version into dir, from the mirror's pool
// folder the suite's Sources index names, and checks it against the
// SHA-256 that index gives (apt checked the index against the suite's
// signed Release file when it read it): the package's tarball without its
// .dsc and Debian changes, which a compile does not use.
func (a apt) origTarball(ctx context.Context, name, version, dir string, logf func(string, ...any)) error {
	out, err := a.run(ctx, dir, "apt-cache", "showsrc", name)
	if err != nil {
		return fmt.Errorf("read its record in the Sources index: %v", err)
	}
	file, sum, folder, err := origInSources(out, name, version)
	if err != nil {
		return err
	}
	u := a.mirror + "/" + folder + "/" + file
	p := filepath.Join(dir, file)
	found, err := download(ctx, u, p, logf)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%s is not on the mirror either (404): name another mirror with --mirror", u)
	}
	got, err := fileSHA256(p)
	if err != nil {
		return err
	}
	if got != sum {
		os.Remove(p)
		return fmt.Errorf("%s has SHA-256 %s, but Debian's signed Sources index says %s: removed", file, got, sum)
	}
	return nil
}

// origInSources finds, in apt-cache showsrc's records, the one of
// package name at version, and in it the upstream tarball's file name,
// its SHA-256 (Checksums-Sha256) and the pool folder it is in
// (Directory).
func origInSources(records []byte, name, version string) (file, sum, dir string, err error) {
	want := name + "_" + Upstream(version) + ".orig.tar."
	for _, rec := range strings.Split(string(records), "\n\n") {
		fields := map[string]string{}
		var key string
		for _, line := range strings.Split(rec, "\n") {
			if strings.HasPrefix(line, " ") && key != "" {
				fields[key] += "\n" + strings.TrimSpace(line)
			} else if k, v, ok := strings.Cut(line, ":"); ok {
				key = k
				fields[k] = strings.TrimSpace(v)
			}
		}
		if fields["Package"] != name || fields["Version"] != version {
			continue
		}
		for _, line := range strings.Split(fields["Checksums-Sha256"], "\n") {
			f := strings.Fields(line)
			if len(f) == 3 && strings.HasPrefix(f[2], want) && sha256RE.MatchString(f[0]) && filepath.IsLocal(f[2]) && !strings.Contains(f[2], "/") {
				if !filepath.IsLocal(fields["Directory"]) {
					return "", "", "", fmt.Errorf("the Sources record of %s %s names no pool folder", name, version)
				}
				return f[2], f[0], fields["Directory"], nil
			}
		}
		return "", "", "", fmt.Errorf("the Sources record of %s %s lists no upstream tarball (%s*): it is a native package", name, version, want)
	}
	return "", "", "", fmt.Errorf("Debian's Sources index has no %s %s", name, version)
}

// debianSourcePackages are the flavors whose source qpslab lists from
// Debian's suites' source indexes, by source package: RocksDB's db_bench
// has no server package to fetch, but `builds source` and `builds compile`
// make a build of each suite's RocksDB (bullseye 6.11, bookworm 7.8,
// trixie 9.10 …).
var debianSourcePackages = map[Flavor]string{RocksDB: "rocksdb"}

// DebianSourceVersions lists, per suite, the versions of flavor f's source
// package (debianSourcePackages) in the suites' source indexes (read
// through the private deb-src apt states `builds source` uses, at most
// once a day).
func (r Registry) DebianSourceVersions(ctx context.Context, f Flavor, mirror string, logf func(string, ...any)) ([]DebianPick, error) {
	name, ok := debianSourcePackages[f]
	if !ok {
		return nil, fmt.Errorf("qpslab lists no Debian source package of %s", f)
	}
	var all []DebianPick
	for _, s := range DebianSuites {
		a := r.aptFor(s, mirror)
		a.dir, a.src = a.dir+"-src", true
		if err := a.update(ctx, logf); err != nil {
			return nil, err
		}
		out, err := a.run(ctx, a.dir, "apt-cache", "showsrc", "--only-source", name)
		if err != nil {
			continue // not in this suite
		}
		for _, rec := range strings.Split(string(out), "\n\n") {
			var pkg, ver string
			for _, line := range strings.Split(rec, "\n") {
				if v, ok := strings.CutPrefix(line, "Package: "); ok {
					pkg = strings.TrimSpace(v)
				} else if v, ok := strings.CutPrefix(line, "Version: "); ok {
					ver = strings.TrimSpace(v)
				}
			}
			if pkg == name && ver != "" {
				all = append(all, DebianPick{Suite: s, Package: pkg, Version: ver})
			}
		}
	}
	return all, nil
}
