// Package names owns what a build, a config and a sandbox may be called:
// one character set, one length limit, and the check that a run names
// each of them once. Every command that takes such a name (builds add,
// fetch and compile, configs add, server start, run, fleet submit, import
// --label) and every name qpslab derives (a --grid point's config, an A/A
// run's, a sandbox's BUILD.CONFIG) passes through here, so that a name one
// command accepts is never one a later one refuses.
//
// The limit is chosen so that what is made of names fits every later
// limit: a stored config is NAME@HASH (12 hex digits), which the import's
// name bound (importer.MaxName, 200 bytes) must hold; a sandbox folder is
// BUILD.CONFIG or BUILD.CONFIG-ENGINE, one file name (at most 255 bytes on
// Linux file systems). names_test.go checks both sums.
package names

import (
	"fmt"
	"regexp"
)

// Max is the longest build or config name, in bytes (the characters are
// ASCII: bytes are characters). Builds were at most 100 before; configs
// had no bound, and one over 187 bytes made runs that import refused.
const Max = 100

// MaxSandbox is the longest sandbox name: a folder's name.
const MaxSandbox = 255

// The characters: letters, digits, _ and -; a build's and a sandbox's also
// . and + (mariadb-10.11.7, percona-server-8.0.36-28). A config's cannot
// hold '.', since a label BUILD.CONFIG splits at its last dot, nor '+',
// which a URL's query reads as a space. The first is a letter or digit,
// so that no name reads as a flag or a hidden file.
var (
	buildRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)
	configRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
)

// rule is what a kind of name may be: its characters (re, said as chars
// in the error), its longest, and an example of one for the error.
type rule struct {
	what           string
	re             *regexp.Regexp
	limit          int
	chars, example string
}

var (
	buildRule   = rule{"build", buildRE, Max, "letters, digits and _ . + -", "ma100244_rel"}
	configRule  = rule{"config", configRE, Max, "letters, digits, _ and -", "cz11a_bee"}
	sandboxRule = rule{"sandbox", buildRE, MaxSandbox, "letters, digits and _ . + -", "ma100244_rel.cz11a_bee"}
)

// Build checks a build name.
func Build(name string) error { return buildRule.check(name) }

// Config checks a config name.
func Config(name string) error { return configRule.check(name) }

// Sandbox checks a sandbox name (BUILD.CONFIG unless named otherwise).
func Sandbox(name string) error { return sandboxRule.check(name) }

func (r rule) check(name string) error {
	if len(name) > r.limit {
		return fmt.Errorf("%s name %.20q… is %d characters long: use at most %d (e.g. %s)", r.what, name, len(name), r.limit, r.example)
	}
	if !r.re.MatchString(name) {
		return fmt.Errorf("%s name %q is not valid: use %s (e.g. %s)", r.what, name, r.chars, r.example)
	}
	return nil
}

// Once refuses a list of names that holds one twice (--config c1,c1): two
// labels of one name would share a sandbox and a label, and neither run
// would be told from the other. flag names the list for the message.
func Once(flag string, list []string) error {
	seen := make(map[string]bool, len(list))
	for _, n := range list {
		if seen[n] {
			return fmt.Errorf("%s names %s twice: give each once", flag, n)
		}
		seen[n] = true
	}
	return nil
}
