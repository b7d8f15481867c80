package suite

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/qpslab/qpslab/internal/duration"
)

// Kind is a parameter's type, which decides the flag the command makes.
type Kind int

var kindNames = []string{"string", "int", "float", "seconds", "bool", "list"}

// String is the kind's name: string, int, float, seconds, bool or list.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// MarshalText writes the kind by name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

const (
	String  Kind = iota
	Int          // a whole number
	Float        // a finite number
	Seconds      // a duration: a number of seconds (fractions allowed) or 6m, 90s (internal/duration); recorded in seconds
	Bool         // a switch
	List         // comma-separated or repeated values
)

// Param is one parameter of a suite or of the plan.
type Param struct {
	Name    string `json:"name"`
	Kind    Kind   `json:"kind"`
	Default string `json:"default,omitempty"` // as it would be typed; "" for none
	Usage   string `json:"usage"`
}

// Values are the parameters as given: every flag of the command, by name
// (a suite reads its own and may look at the plan's), and which were set.
type Values struct {
	m     map[string]string
	set   map[string]bool
	files *files // shared by the copies With makes
}

// files are the local files a suite reads through Values.ReadFile (a
// script, an init file): those given with the plan, which a fleet job
// carries to its host, and those read from this machine.
type files struct {
	given map[string][]byte
	mu    sync.Mutex
	read  map[string][]byte
}

// ReadFile reads the file a parameter names: the copy given with the plan
// (WithFiles: a fleet job's) when there is one, else the file on this
// machine, which FilesRead then holds. A suite reads every file it needs
// through it, so that a plan submitted to the fleet takes them along.
func (v Values) ReadFile(path string) ([]byte, error) {
	if v.files == nil {
		return os.ReadFile(path)
	}
	if b, ok := v.files.given[path]; ok {
		return b, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v.files.mu.Lock()
	defer v.files.mu.Unlock()
	if v.files.read == nil {
		v.files.read = map[string][]byte{}
	}
	v.files.read[path] = b
	return b, nil
}

// WithFiles returns a copy of v whose ReadFile gives these files' contents
// (by the path the parameter names) instead of reading this machine's.
func (v Values) WithFiles(given map[string][]byte) Values {
	v.files = &files{given: given}
	return v
}

// FilesRead are the files ReadFile read from this machine, by path.
func (v Values) FilesRead() map[string][]byte {
	if v.files == nil {
		return nil
	}
	v.files.mu.Lock()
	defer v.files.mu.Unlock()
	return maps.Clone(v.files.read)
}

// NewValues returns values from the given map; set names those the user
// gave (the rest are defaults).
func NewValues(m map[string]string, set map[string]bool) Values {
	if m == nil {
		m = map[string]string{}
	}
	if set == nil {
		set = map[string]bool{}
	}
	return Values{m: m, set: set, files: &files{}}
}

// Defaults returns the values of params at their defaults.
func Defaults(params ...[]Param) Values {
	v := NewValues(nil, nil)
	for _, ps := range params {
		for _, p := range ps {
			v.m[p.Name] = p.Default
		}
	}
	return v
}

// With returns a copy of v with name set to value, as if the user gave it.
func (v Values) With(name, value string) Values {
	m := make(map[string]string, len(v.m)+1)
	set := make(map[string]bool, len(v.set)+1)
	for k, x := range v.m {
		m[k] = x
	}
	for k, x := range v.set {
		set[k] = x
	}
	m[name], set[name] = value, true
	return Values{m: m, set: set, files: v.files}
}

// Changed says whether the user gave name.
func (v Values) Changed(name string) bool { return v.set[name] }

// Checker reads values and collects every problem, so that a bad run is
// one error before anything starts.
type Checker struct {
	v    Values
	errs []error
}

// Check starts reading v.
func (v Values) Check() *Checker { return &Checker{v: v} }

func (c *Checker) fail(name, val, want string) {
	c.errs = append(c.errs, fmt.Errorf("--%s %s: %s", name, val, want))
}

// Err is every problem found, on one line; nil when there was none.
func (c *Checker) Err() error {
	if len(c.errs) == 0 {
		return nil
	}
	msgs := make([]string, len(c.errs))
	for i, e := range c.errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// Problem adds a problem found by the caller.
func (c *Checker) Problem(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// String is the value of name.
func (c *Checker) String(name string) string { return strings.TrimSpace(c.v.m[name]) }

// Bool is the value of a switch.
func (c *Checker) Bool(name string) bool {
	s := c.String(name)
	if s == "" {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		c.fail(name, Quote(s), "give true or false")
	}
	return b
}

// Int is a whole number in [lo, hi].
func (c *Checker) Int(name string, lo, hi int64) int64 {
	s := c.String(name)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		c.fail(name, Quote(s), "give a whole number "+rangeText(float64(lo), float64(hi), true))
		return lo
	}
	return n
}

// Float is a finite number in [lo, hi].
func (c *Checker) Float(name string, lo, hi float64) float64 {
	s := c.String(name)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < lo || f > hi {
		c.fail(name, Quote(s), "give a finite number "+rangeText(lo, hi, false))
		return lo
	}
	return f
}

// Seconds is a duration (internal/duration: a number of seconds, or 6m,
// 90s): finite, above zero (or zero when zeroOK), at most a week.
func (c *Checker) Seconds(name string, zeroOK bool) time.Duration {
	d, err := duration.Parse(c.String(name), zeroOK)
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("--%s %w", name, err))
		return 0
	}
	return d
}

// List is a comma-separated list (empty items dropped).
func (c *Checker) List(name string) []string {
	var out []string
	for _, f := range strings.Split(c.v.m[name], ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Ints is a comma-separated list of whole numbers in [lo, hi].
func (c *Checker) Ints(name string, lo, hi int64) []int {
	var out []int
	for _, f := range c.List(name) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < lo || n > hi {
			c.fail(name, Quote(c.v.m[name]), "give whole numbers "+rangeText(float64(lo), float64(hi), true)+", comma-separated (e.g. 1,4,16)")
			return nil
		}
		out = append(out, int(n))
	}
	return out
}

// OneOf is a value among choices.
func (c *Checker) OneOf(name string, choices ...string) string {
	s := c.String(name)
	for _, x := range choices {
		if s == x {
			return s
		}
	}
	c.fail(name, Quote(s), "use "+strings.Join(choices, ", "))
	return choices[0]
}

// Quote is a value as an error line shows it: as typed, or quoted when it
// is empty or holds spaces or control characters (an error stays one line).
func Quote(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) {
		return strconv.Quote(s)
	}
	return s
}

func rangeText(lo, hi float64, whole bool) string {
	f := func(x float64) string {
		if whole {
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	switch {
	case hi >= math.MaxInt64 || math.IsInf(hi, 1) || hi >= math.MaxFloat64:
		return "of at least " + f(lo)
	default:
		return "from " + f(lo) + " to " + f(hi)
	}
}

// Given are the values the user gave, by name (the rest are defaults): a
// copy.
func (v Values) Given() map[string]string {
	out := make(map[string]string, len(v.set))
	for k, set := range v.set {
		if set {
			out[k] = v.m[k]
		}
	}
	return out
}
