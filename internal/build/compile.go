package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/gofrs/flock"
)

// CompileOptions say what qpslab builds compile compiles.
type CompileOptions struct {
	Src    string // a git tree or an unpacked source tree
	Flavor Flavor // "": detected from the tree (DetectSource)
	Name   string // "": FLAVOR-short + version digits + _YYMMDD(commit time) + _HASH8 (pg1518_240723_2ee061c2); not in git: FLAVOR-VERSION-src
	Commit string // a revision of a git tree; "": HEAD. Given for a tree not in git: an error
	CFlags string // "": the flavor's default (PGCFlags, CMakeCFlags, RocksDBCFlags)
	// CMakeOptions are -DNAME=VALUE options added to a CMake build's
	// configure (MariaDB, MySQL), after the recipe's: -DWITH_LTO=ON.
	CMakeOptions []string
	Jobs         int       // 0: runtime.NumCPU()
	Replace      bool      // replace a build of the same name
	Progress     io.Writer // one line per phase; nil: none
}

// CompileError is a compile that failed: the phase, and the log holding
// the compiler's output. Error() is one line naming both.
type CompileError struct {
	Name, Phase, Log string
	Err              error
}

func (e *CompileError) Error() string {
	msg := fmt.Sprintf("compile %s: %s failed (%v): see %s", e.Name, e.Phase, e.Err, e.Log)
	if last := lastLogLine(e.Log); last != "" {
		msg += " (last line: " + last + ")"
	}
	return msg
}

func (e *CompileError) Unwrap() error { return e.Err }

// lastLogLine is the last non-empty line of the log, cut to 200 bytes.
func lastLogLine(p string) string {
	raw, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n \t\r"), "\n")
	last := strings.TrimSpace(terminalSafe(lines[len(lines)-1]))
	if len(last) > 200 {
		last = strings.ToValidUTF8(last[:200], "") + "…"
	}
	return last
}

var ansiSeqRE = regexp.MustCompile(`\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])`)

// terminalSafe is s without the terminal's escape sequences (colours,
// titles), its tabs as spaces and any other control character written
// as Go writes it in a quoted string (\x1b, \r): a log's line printed to
// a terminal cannot move the cursor or change the screen.
func terminalSafe(s string) string {
	s = ansiSeqRE.ReplaceAllString(strings.ToValidUTF8(s, "\uFFFD"), "")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// DetectSource finds the flavor of the source tree at src and the version
// it says it is, asking each flavor's descriptor (a PostgreSQL configure,
// configure.ac or meson.build; a VERSION file of MYSQL_VERSION_*, MariaDB's
// when its CMakeLists.txt or README says MariaDB; RocksDB's
// include/rocksdb/version.h beside a Makefile that makes db_bench). With f
// given, the tree must be of f.
func DetectSource(src string, f Flavor) (Flavor, string, error) {
	if f != "" {
		d, ok := lookup(f)
		if !ok || d.source == nil {
			return "", "", fmt.Errorf("qpslab cannot compile %s", f)
		}
		if v, ok := d.source(src); ok {
			return f, v, nil
		}
		return "", "", fmt.Errorf("%s is not a %s source tree (no version found where %s keeps it): check the folder, or leave out --flavor", src, d.Title, d.Title)
	}
	for _, d := range flavors {
		if d.source == nil {
			continue
		}
		if v, ok := d.source(src); ok {
			return d.Flavor, v, nil
		}
	}
	return "", "", fmt.Errorf("%s is no source tree qpslab knows (PostgreSQL, MariaDB, MySQL or RocksDB): give the top of the tree, or --flavor", src)
}

// versionDigits are a version's parts run together as the reference names
// builds (15.18 → 1518, 8.0.36 → 8036); MariaDB pads its minor and patch
// to two digits (10.2.44 → 100244, 10.11.7 → 101107, 11.4 → 1104).
func versionDigits(f Flavor, ver string) string {
	parts := strings.Split(numericVersion(ver), ".")
	for i := 1; f == MariaDB && i < len(parts); i++ {
		if len(parts[i]) == 1 {
			parts[i] = "0" + parts[i]
		}
	}
	return strings.Join(parts, "")
}

// DefaultCompileName is the name a compiled build gets without --name:
// from a commit, the flavor's short name, the version's digits, the commit
// day and its hash (pg1518_240723_2ee061c2); from a tree not in git,
// FLAVOR-VERSION-src.
func DefaultCompileName(f Flavor, ver string, c Commit) string {
	if c.Hash == "" {
		return string(f) + "-" + ver + "-src"
	}
	return f.Describe().short + versionDigits(f, ver) + "_" + c.Time.UTC().Format("060102") + "_" + c.Short()
}

// gitTop says whether dir is the top of a git work tree (not merely inside
// one: an unpacked tree in a folder of some repository is no git tree).
func gitTop(ctx context.Context, dir string) bool {
	if !IsGitTree(ctx, dir) {
		return false
	}
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	top, err1 := filepath.EvalSymlinks(strings.TrimSpace(out))
	abs, err2 := filepath.EvalSymlinks(dir)
	return err1 == nil && err2 == nil && top == abs
}

var unsafeKey = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Compile builds a source tree with its flavor's recipe into the cache
// and registers it. A commit of a git tree is checked out into qpslab's
// own clone of the tree (the user's tree is never written); one build
// folder per source tree and --cflags is reused, so a later commit
// rebuilds only what changed; a lock keeps two compiles of one tree apart. A failed compile
// returns *CompileError and leaves no record and no install prefix, only
// its log.
func (r Registry) Compile(ctx context.Context, o CompileOptions) (Build, error) {
	if o.Src == "" {
		return Build{}, fmt.Errorf("name the source tree to compile: qpslab builds compile SRC")
	}
	if o.Flavor != "" { // as users type it: pg, postgresql, maria …
		f, err := ParseFlavor(string(o.Flavor))
		if err != nil {
			return Build{}, err
		}
		o.Flavor = f
	}
	if strings.IndexFunc(o.CFlags, unicode.IsControl) >= 0 {
		return Build{}, fmt.Errorf("--cflags %s holds a control character: give the flags on one line of printable characters", strconv.Quote(o.CFlags))
	}
	for _, opt := range o.CMakeOptions {
		if err := checkCMakeOption(opt); err != nil {
			return Build{}, err
		}
	}
	if o.Name != "" { // refused before anything is cloned or made in the cache
		if err := checkName(o.Name); err != nil {
			return Build{}, err
		}
	}
	src, err := filepath.Abs(o.Src)
	if err != nil {
		return Build{}, fmt.Errorf("resolve %s: %w", o.Src, err)
	}
	var tarball, tarballSum string // SRC is a source tarball: its unpacked tree is compiled
	if st, err := os.Stat(src); err == nil && st.Mode().IsRegular() {
		if !isSourceTarball(src) {
			return Build{}, fmt.Errorf("source %s is a file but no tarball (gzip, xz, bzip2 or tar): give a source tarball, the top of an unpacked source tree or a git checkout", o.Src)
		}
		if o.Commit != "" {
			return Build{}, fmt.Errorf("%s is a tarball, so it has no commit %s: compile a git checkout, or leave out --commit", o.Src, o.Commit)
		}
		tarball = src
		if src, tarballSum, err = r.unpackSource(ctx, src, o.Progress); err != nil {
			return Build{}, err
		}
	} else if err != nil || !st.IsDir() {
		return Build{}, fmt.Errorf("source tree %s is not a folder: give the top of an unpacked source tree, a source tarball or a git checkout", o.Src)
	}
	if real, err := filepath.EvalSymlinks(src); err == nil {
		src = real // one tree, one clone and one record, by whatever link it is named
	}
	inGit := gitTop(ctx, src)
	var commit Commit
	switch {
	case inGit:
		rev := o.Commit
		if rev == "" {
			rev = "HEAD"
		}
		if commit, err = Resolve(ctx, src, rev); err != nil {
			return Build{}, err
		}
	case o.Commit != "":
		return Build{}, fmt.Errorf("%s is not a git tree, so it has no commit %s: compile a git checkout, or leave out --commit", o.Src, o.Commit)
	}
	if !inGit { // refused before anything is made in the cache
		if _, _, err := DetectSource(src, o.Flavor); err != nil {
			return Build{}, err
		}
	}
	if o.Flavor != "" { // a given flavor's tools: checked before the clone
		d, ok := lookup(o.Flavor)
		if !ok || d.source == nil {
			return Build{}, fmt.Errorf("qpslab cannot compile %s", o.Flavor)
		}
		if err := checkNeeds(d); err != nil {
			return Build{}, err
		}
	}
	if inGit && !o.Replace {
		if b, ok := r.compiledBefore(src, commit, o); ok { // nothing cloned, checked out or built
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "compile %s: commit %s compiled before with these flags: the build is reused\n", b.Name, commit.Short())
			}
			return b, nil
		}
	}
	sum := sha256.Sum256([]byte(src))
	work := filepath.Join(r.Cache, "src", unsafeKey.ReplaceAllString(filepath.Base(src), "_")+"-"+hex.EncodeToString(sum[:4]))
	_, statErr := os.Stat(work)
	made := os.IsNotExist(statErr)
	// discard removes the work folder when this compile made it and
	// nothing was built in it (a refused tree, a tool missing).
	discard := func() {
		if made {
			os.RemoveAll(work)
			os.Remove(work + ".lock")
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return Build{}, fmt.Errorf("create %s: %w", work, err)
	}
	if lockBusy(work+".lock") && o.Progress != nil {
		fmt.Fprintf(o.Progress, "compile: another compile of %s is running (lock %s): waiting for it\n", src, work+".lock")
	}
	unlock, err := lockFile(ctx, work+".lock")
	if err != nil {
		return Build{}, err
	}
	defer unlock()

	tree := src
	if inGit {
		// Read the flavor from the commit's tree, not the user's working tree.
		tree = filepath.Join(work, "tree")
		if err := checkout(ctx, src, tree, commit.Hash); err != nil {
			discard()
			return Build{}, err
		}
	}
	f, ver, err := DetectSource(tree, o.Flavor)
	if err != nil && inGit { // named as the user gave it, not by qpslab's clone
		discard()
		if o.Flavor != "" {
			d, _ := lookup(o.Flavor)
			return Build{}, fmt.Errorf("%s at commit %s is not a %s source tree (no version found where %s keeps it): check the tree and the commit, or leave out --flavor", o.Src, commit.Short(), d.Title, d.Title)
		}
		return Build{}, fmt.Errorf("%s at commit %s is no PostgreSQL, MariaDB, MySQL or RocksDB source tree: give the top of the tree, a commit of it that is one, or --flavor", o.Src, commit.Short())
	}
	if err != nil {
		return Build{}, err
	}
	d, _ := lookup(f)
	if len(o.CMakeOptions) > 0 && !d.cmake {
		discard()
		return Build{}, fmt.Errorf("--cmake-option is for the CMake builds (MariaDB, MySQL); %s %s builds with %s: leave it out, or give its flags with --cflags", d.Title, ver, map[bool]string{true: "its Makefile", false: "configure (or meson)"}[f == RocksDB])
	}
	if err := checkNeeds(d); err != nil {
		discard()
		return Build{}, err
	}
	name := o.Name
	if name == "" {
		name = DefaultCompileName(f, ver, commit)
		if o.variant() != "" && commit.Hash != "" { // kept apart from the default flags' build of the commit
			name += "_" + flagsKey(o.variant())
		}
	}
	if err := checkName(name); err != nil {
		discard()
		return Build{}, err
	}
	old, oldErr := r.load(name)
	if oldErr == nil && !o.Replace && (commit.Hash == "" || old.Commit != commit.Hash) {
		discard()
		return Build{}, fmt.Errorf("build %q exists (%s %s at %s): choose another name with --name or pass --replace", name, old.Flavor, old.Version, old.Where())
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	_, ccErr := exec.LookPath("ccache")
	buildDir := filepath.Join(work, "build") // one per (tree, flags): configure, meson and make keep the flags of the first setup
	if o.variant() != "" {
		buildDir += "-" + flagsKey(o.variant())
	}
	in := recipeIn{Src: tree, Build: buildDir, Prefix: filepath.Join(work, "install"), CFlags: o.CFlags, CMakeOptions: o.CMakeOptions,
		Jobs: jobs, CCache: ccErr == nil, Version: ver, Cache: r.Cache}
	if d.inTree {
		in.Build = tree // qpslab's checkout; a user's tree is copied below
		if !inGit {
			in.Build = buildDir
		}
	}
	rc := d.recipe(in)
	flagsStamp := filepath.Join(in.Build, ".qpslab-flags")
	if d.inTree && inGit {
		// One checkout for all flags: objects of other flags are cleaned first.
		if raw, err := os.ReadFile(flagsStamp); err == nil && string(raw) != rc.Flags {
			rc.Steps = append([]step{{Phase: "clean", Dir: in.Build, Args: []string{"make", "clean"}}}, rc.Steps...)
		}
	}
	if oldErr == nil && !o.Replace {
		// The same commit compiled before: the same build when the flags and
		// the tree agree and its binaries are there (a bisection asks again
		// for the commits an earlier one compiled).
		if _, err := old.Layout(); err != nil || old.Flags != rc.Flags || !sameTree(old.Src, src) {
			discard()
			return Build{}, fmt.Errorf("build %q exists, compiled from commit %s with other flags or from another tree (or its binaries are gone): choose another name with --name or pass --replace", name, commit.Short())
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "compile %s: commit %s compiled before with these flags: the build is reused\n", name, commit.Short())
		}
		return old, nil
	}
	logs := r.Logs
	if logs == "" {
		logs = filepath.Join(filepath.Dir(r.Dir), "logs")
	}
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return Build{}, fmt.Errorf("create %s: %w", logs, err)
	}
	// Its time and random bits, created exclusively: two compiles of one
	// name started in the same second write two logs, not one torn one.
	logf, err := os.CreateTemp(logs, "compile-"+name+"-"+time.Now().UTC().Format("20060102T150405")+"-*.log")
	if err != nil {
		return Build{}, fmt.Errorf("create the compile log: %w", err)
	}
	logPath := logf.Name()
	defer logf.Close()
	fmt.Fprintf(logf, "qpslab builds compile %s: %s %s, commit %s, into %s\n", src, f, ver, commit.Hash, in.Prefix)

	steps := rc.Steps
	if d.inTree && !inGit {
		steps = append([]step{{Phase: "copy", Dir: work, Args: []string{"cp", "-a", src + "/.", in.Build}}}, steps...)
	}
	os.RemoveAll(in.Prefix) // what a killed compile left
	fail := func(phase string, err error) (Build, error) {
		os.RemoveAll(in.Prefix)
		if ctx.Err() != nil { // interrupted: not a commit that does not build
			return Build{}, fmt.Errorf("compile %s: %s interrupted (log: %s): %w", name, phase, logPath, ctx.Err())
		}
		return Build{}, &CompileError{Name: name, Phase: phase, Log: logPath, Err: err}
	}
	if d.inTree && steps[0].Phase != "clean" { // objects made from here on are of these flags
		os.MkdirAll(in.Build, 0o755)
		os.WriteFile(flagsStamp, []byte(rc.Flags), 0o644)
	}
	for _, s := range steps {
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return fail(s.Phase, err)
		}
		stamp := filepath.Join(in.Build, ".qpslab-"+s.Phase)
		if s.Once {
			if raw, err := os.ReadFile(stamp); err == nil && string(raw) == s.Command() {
				fmt.Fprintf(logf, "\n$ %s\n(done before, in %s: skipped)\n", s.Command(), in.Build)
				if o.Progress != nil {
					fmt.Fprintf(o.Progress, "compile %s: %s (done before in %s, skipped)\n", name, s.Phase, in.Build)
				}
				continue
			}
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "compile %s: %s (log: %s)\n", name, s.Phase, logPath)
		}
		if err := runStep(ctx, s, logf); err != nil {
			os.Remove(stamp)
			return fail(s.Phase, err)
		}
		if s.Once {
			os.WriteFile(stamp, []byte(s.Command()), 0o644)
		}
		if d.inTree && s.Phase == "clean" {
			os.WriteFile(flagsStamp, []byte(rc.Flags), 0o644)
		}
	}
	// Checked where it was installed, then moved to its own folder: a build
	// it replaces stays whole until then.
	b := Build{Name: name, Flavor: f, Source: "compile", Added: time.Now().UTC(), Commit: commit.Hash, CommitTime: commit.Time, Flags: rc.Flags, Src: src,
		Artifact: tarball, SHA256: tarballSum, CMakeOptions: o.CMakeOptions}
	if err := checkCompiled(ctx, &b, in.Prefix, rc.Program, ver); err != nil {
		fmt.Fprintf(logf, "\ncheck: %v\n", err)
		return fail("check", err)
	}
	dest := filepath.Join(r.Cache, "compiled", name)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fail("install", err)
	}
	// The build it replaces is moved aside, not removed, until the new one
	// is in and recorded: it comes back when a step fails.
	aside := dest + ".replaced"
	os.RemoveAll(aside) // what a killed compile left
	hadOld := false
	if _, err := os.Lstat(dest); err == nil {
		if err := os.Rename(dest, aside); err != nil {
			return fail("install", fmt.Errorf("move the build it replaces aside: %w", err))
		}
		hadOld = true
	}
	restore := func() {
		if hadOld {
			os.RemoveAll(dest)
			os.Rename(aside, dest)
		}
	}
	if err := renameDir(in.Prefix, dest); err != nil {
		restore()
		return fail("install", fmt.Errorf("move the install prefix to %s: %w", dest, err))
	}
	b.Basedir = dest
	if rc.Program != "" {
		b.Program = filepath.Join(dest, rc.Program)
	}
	if err := r.save(b, true); err != nil {
		os.RemoveAll(dest)
		restore()
		return Build{}, err
	}
	os.RemoveAll(aside)
	fmt.Fprintf(logf, "\nregistered build %s: %s %s at %s\n", name, f, b.Version, b.Where())
	return b, nil
}

// compiledBefore finds the build of commit of the tree src with the flags
// o asks for, compiled before under the name o gives (or, without --name,
// the default name), from its record alone: no checkout. A record it cannot
// decide from (a recipe whose flags depend on the tree) is left to the
// check after the checkout.
func (r Registry) compiledBefore(src string, commit Commit, o CompileOptions) (Build, bool) {
	suffix := ""
	if o.variant() != "" {
		suffix = "_" + flagsKey(o.variant())
	}
	names := []string{o.Name}
	if o.Name == "" {
		paths, _ := filepath.Glob(filepath.Join(r.Dir, "*_"+commit.Short()+suffix+".yaml"))
		names = names[:0]
		for _, p := range paths {
			names = append(names, strings.TrimSuffix(filepath.Base(p), ".yaml"))
		}
	}
	for _, name := range names {
		old, err := r.load(name)
		if err != nil || old.Source != "compile" || old.Commit != commit.Hash || !sameTree(old.Src, src) || o.Flavor != "" && old.Flavor != o.Flavor {
			continue
		}
		if o.Name == "" && name != DefaultCompileName(old.Flavor, old.Version, commit)+suffix {
			continue
		}
		d, ok := lookup(old.Flavor)
		if !ok || d.recipe == nil || d.recipe(recipeIn{CFlags: o.CFlags, CMakeOptions: o.CMakeOptions, Version: old.Version, Cache: r.Cache}).Flags != old.Flags {
			continue
		}
		if _, err := old.Layout(); err == nil {
			return old, true
		}
	}
	return Build{}, false
}

// renameDir moves the folder from to to (a variable: tests make it fail).
var renameDir = os.Rename

// sameTree says whether the folders a and b are one, through symbolic links.
func sameTree(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return a == b || err1 == nil && err2 == nil && ra == rb
}

// variant is what sets a build apart from the flavor's default build of
// a tree: --cflags, and the --cmake-option list after it ("" for
// neither). Without options it is --cflags alone, as builds compiled
// before --cmake-option are named.
func (o CompileOptions) variant() string {
	if len(o.CMakeOptions) == 0 {
		return o.CFlags
	}
	return o.CFlags + "\x00" + strings.Join(o.CMakeOptions, "\x00")
}

// cmakeOptionRE is a CMake cache entry set on the command line:
// -DNAME=VALUE or -DNAME:TYPE=VALUE.
var cmakeOptionRE = regexp.MustCompile(`^-D[A-Za-z_][A-Za-z0-9_.+-]*(:[A-Z]+)?=`)

// checkCMakeOption refuses what is not one -DNAME=VALUE, one that holds a
// control character, and the options the recipe owns (the install prefix,
// the build type, the compiler flags: --cflags sets those).
func checkCMakeOption(opt string) error {
	if strings.IndexFunc(opt, unicode.IsControl) >= 0 {
		return fmt.Errorf("--cmake-option %s holds a control character: give one -DNAME=VALUE of printable characters", strconv.Quote(opt))
	}
	if !cmakeOptionRE.MatchString(opt) {
		return fmt.Errorf("--cmake-option %s is not a CMake option: give -DNAME=VALUE (e.g. -DWITH_LTO=ON), one per --cmake-option", strconv.Quote(opt))
	}
	name := strings.SplitN(strings.SplitN(strings.TrimPrefix(opt, "-D"), "=", 2)[0], ":", 2)[0]
	switch {
	case name == "CMAKE_INSTALL_PREFIX":
		return fmt.Errorf("--cmake-option %s: qpslab installs the build into its cache itself: leave it out", opt)
	case name == "CMAKE_BUILD_TYPE" || strings.HasPrefix(name, "CMAKE_C_FLAGS") || strings.HasPrefix(name, "CMAKE_CXX_FLAGS"):
		return fmt.Errorf("--cmake-option %s: the recipe sets the build type and the compiler flags (a Release build with -O2): give other C and C++ flags with --cflags", opt)
	}
	return nil
}

// flagsKey is 8 hex digits of the sha256 of --cflags (and the
// --cmake-option list, variant): it names the build folder of those flags
// and, without --name, their build.
func flagsKey(cflags string) string {
	sum := sha256.Sum256([]byte(cflags))
	return hex.EncodeToString(sum[:4])
}

// checkName checks a compiled build's name: a valid one, not a Debian
// package's (FLAVOR-system).
func checkName(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if strings.HasSuffix(name, "-system") {
		return fmt.Errorf("build name %q is reserved for the Debian packages: choose another name", name)
	}
	return nil
}

// checkCompiled reads the version of what was installed at prefix (its
// program, for rocksdb) into b, and checks it is of b's flavor and of the
// version the tree said (ver).
func checkCompiled(ctx context.Context, b *Build, prefix, program, ver string) error {
	var got Flavor
	var err error
	if program != "" {
		var l Layout
		if l, err = programLayout(filepath.Join(prefix, program)); err == nil {
			got, b.Version, b.Banner, err = ReadVersion(ctx, b.Flavor, l)
		}
	} else {
		_, got, b.Version, b.Banner, err = Inspect(ctx, b.Flavor, prefix)
	}
	if err != nil {
		return err
	}
	if got != b.Flavor {
		return fmt.Errorf("the build's program is %s, not %s", got, b.Flavor)
	}
	if CompareVersions(numericVersion(ver), b.Version) != 0 {
		return fmt.Errorf("the tree says %s %s but the compiled binary reports %s", b.Flavor.Describe().Title, ver, b.Version)
	}
	return nil
}

// checkout makes dir qpslab's clone of the git tree src (once: a clone
// that shares src's objects, checked out nowhere) and checks out hash in
// it, and its submodules, discarding what an earlier checkout changed.
// Build products, which git does not track, stay: the next build reuses
// them.
func checkout(ctx context.Context, src, dir, hash string) error {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		os.RemoveAll(dir)
		if _, err := git(ctx, filepath.Dir(dir), "clone", "-q", "--shared", "--no-checkout", src, dir); err != nil {
			return fmt.Errorf("clone %s into the cache: %v", src, err)
		}
	}
	if _, err := git(ctx, dir, "checkout", "-q", "--force", "--detach", hash); err != nil {
		return fmt.Errorf("check out %s of %s in the cache (%s): %v", hash, src, dir, err)
	}
	if firstFile(dir, ".gitmodules") != "" {
		// MariaDB's libmariadb, wsrep-lib …: fetched from the URLs the tree
		// names (file URLs too: they are the user's own).
		if _, err := git(ctx, dir, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive", "--force"); err != nil {
			return fmt.Errorf("check out the submodules of %s at %s in the cache (%s): %v", src, hash, dir, err)
		}
	}
	return nil
}

// runStep runs one step with its output into the log.
func runStep(ctx context.Context, s step, log io.Writer) error {
	fmt.Fprintf(log, "\n$ cd %s && %s\n", shellQuote(s.Dir), s.Command())
	cmd := exec.CommandContext(ctx, s.Args[0], s.Args[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = append(append(os.Environ(), "LC_ALL=C"), s.Env...)
	cmd.Stdout, cmd.Stderr = log, log
	// Interrupted, the whole step goes: make and the compilers it started
	// (killing make alone leaves its compilers running to their end).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return errors.New("exit " + strconv.Itoa(ee.ExitCode()))
		}
		return err
	}
	return nil
}

// lockBusy says whether another process holds the lock file p now.
func lockBusy(p string) bool {
	if _, err := os.Stat(p); err != nil {
		return false
	}
	l := flock.New(p)
	ok, err := l.TryLock()
	if ok {
		l.Unlock()
	}
	return err == nil && !ok
}
