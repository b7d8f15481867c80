package build

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// recipeIn is what a flavor's recipe compiles: a source tree into a build
// folder, installed into an install prefix.
type recipeIn struct {
	Src    string // the source tree (qpslab's checkout of a commit, or the user's unpacked tree)
	Build  string // the build folder, reused from one compile of the tree to the next
	Prefix string // the install prefix
	CFlags string // the user's flags (--cflags); "" for the flavor's default
	// CMakeOptions are the user's -DNAME=VALUE (--cmake-option), after the
	// recipe's own (a CMake recipe's; others refuse them before).
	CMakeOptions []string
	Jobs         int    // parallel jobs (make -jN)
	CCache       bool   // ccache is installed: compile through it
	Version      string // the version the tree says it is
	Cache        string // qpslab's cache (MySQL's Boost download goes there)
}

// step is one command of a recipe, run in Dir. Phase names it in progress
// lines and errors. A step marked once is skipped when the build folder
// holds a stamp of the same command from an earlier compile (a configure
// step: the build system re-runs it itself when its inputs change, so a
// later commit rebuilds only what changed).
type step struct {
	Phase string
	Dir   string
	Args  []string
	Env   []string // added to the environment
	Once  bool
}

// recipe is how a tree compiles: its steps, the flags recorded with the
// build (Build.Flags), and for a program build (rocksdb) where the program
// is under the install prefix.
type recipe struct {
	Steps   []step
	Flags   string
	Program string // relative to the prefix; "" for a server
}

// Command is the step's command line as a shell would take it.
func (s step) Command() string {
	var b strings.Builder
	for _, e := range s.Env {
		b.WriteString(shellQuote(e) + " ")
	}
	for i, a := range s.Args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./=:,+@%-]+$`)

// ShellQuote quotes s for a POSIX shell where it needs it.
func ShellQuote(s string) string { return shellQuote(s) }

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func jobsArg(n int) string { return "-j" + strconv.Itoa(n) }

// need is a tool or a header a recipe needs, and the Debian package that
// has it.
type need struct {
	Tool   string // a program on PATH
	Header string // a file under /usr/include
	Pkg    string
}

// missingPkgs are the packages of the needs this machine lacks.
func missingPkgs(needs []need) []string {
	var pkgs []string
	seen := map[string]bool{}
	for _, n := range needs {
		ok := true
		switch {
		case n.Tool != "":
			_, err := exec.LookPath(n.Tool)
			ok = err == nil
		case n.Header != "":
			ok = firstFile("/usr/include", n.Header) != "" || len(globHeader(n.Header)) > 0
		}
		if !ok && !seen[n.Pkg] {
			seen[n.Pkg] = true
			pkgs = append(pkgs, n.Pkg)
		}
	}
	return pkgs
}

// globHeader finds a header under a multiarch include folder
// (/usr/include/x86_64-linux-gnu/…).
func globHeader(h string) []string {
	m, _ := filepath.Glob(filepath.Join("/usr/include", "*", h))
	return m
}

// checkNeeds says in one line what the flavor's recipe lacks here, and the
// apt-get line that installs it.
func checkNeeds(d *Descriptor) error {
	pkgs := missingPkgs(d.needs)
	if len(pkgs) == 0 {
		return nil
	}
	hint := ""
	if d.Flavor == Postgres {
		hint = "run make setup, or "
	}
	return fmt.Errorf("compiling %s needs %s, not installed here: %ssudo apt-get install -y %s", d.Title, strings.Join(pkgs, ", "), hint, strings.Join(pkgs, " "))
}

// readVersionFile reads NAME=VALUE lines (MariaDB's and MySQL's VERSION).
func readVersionFile(p string) map[string]string {
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok {
			out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return out
}

// fileHas says whether the file at p contains s.
func fileHas(p, s string) bool {
	raw, err := os.ReadFile(p)
	return err == nil && strings.Contains(string(raw), s)
}

// numericVersion is the leading dotted digits of v ("17devel" → "17").
func numericVersion(v string) string {
	return leadingVersionRE.FindString(v)
}

var leadingVersionRE = regexp.MustCompile(`^\d+(?:\.\d+)*`)
