package dbbench

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/config"
)

// Flag is one flag a db_bench takes, as its --help lists it.
type Flag struct {
	Type    string // bool, int32, int64, uint32, uint64, double, string
	Default string // as --help prints it (a string's quotes removed)
}

// Help is what a db_bench's --help says: its flags, and the names its
// benchmark list mentions (meta operations such as waitforcompaction came
// in later versions).
type Help struct {
	Flags map[string]Flag
	words map[string]bool
}

// Knows says whether the benchmark list mentions name.
func (h *Help) Knows(name string) bool { return h.words[name] }

var (
	// gflags prints each flag as "    -name (help text) type: T default: D",
	// the text wrapped at 80 columns on lines indented further.
	helpFlagRE  = regexp.MustCompile(`^    -([A-Za-z0-9_]+)(?: \(|$)`)
	helpTypeRE  = regexp.MustCompile(`type: (\w+)\s+default: (.*)$`)
	helpWordsRE = regexp.MustCompile(`[A-Za-z0-9_]+`)
)

// ParseHelp reads db_bench --help. gflags' help is parsed by hand: no
// library reads another program's flag listing.
func ParseHelp(text string) (*Help, error) {
	h := &Help{Flags: map[string]Flag{}, words: map[string]bool{}}
	var name string
	var entry []string
	flush := func() {
		if name == "" {
			return
		}
		joined := strings.Join(entry, " ")
		if m := helpTypeRE.FindStringSubmatch(joined); m != nil {
			h.Flags[name] = Flag{Type: m[1], Default: strings.Trim(strings.TrimSpace(m[2]), `"`)}
		}
		if name == "benchmarks" {
			for _, w := range helpWordsRE.FindAllString(joined, -1) {
				h.words[w] = true
			}
		}
		name, entry = "", nil
	}
	for _, l := range strings.Split(text, "\n") {
		if m := helpFlagRE.FindStringSubmatch(l); m != nil {
			flush()
			name = m[1]
		}
		if name != "" {
			entry = append(entry, strings.TrimSpace(l))
		}
	}
	flush()
	if len(h.Flags) == 0 || h.Flags["benchmarks"].Type == "" {
		return nil, fmt.Errorf("its --help lists no flags")
	}
	return h, nil
}

// helps caches each program's --help by path, size and time: a plan asks
// for every build × config, and each step.
var helps = struct {
	sync.Mutex
	m map[string]*Help
}{m: map[string]*Help{}}

// helpOf runs program --help (with env) once per version of the file.
func helpOf(ctx context.Context, program string, env []string) (*Help, error) {
	st, err := os.Stat(program)
	if err != nil {
		return nil, fmt.Errorf("db_bench %s: %w", program, err)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", program, st.Size(), st.ModTime().UnixNano())
	helps.Lock()
	h := helps.m[key]
	helps.Unlock()
	if h != nil {
		return h, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, "--help")
	cmd.Env = env
	out, _ := cmd.CombinedOutput() // gflags exits 1 after --help
	h, err = ParseHelp(string(out))
	if err != nil {
		return nil, fmt.Errorf("read the flags of %s: %w", program, err)
	}
	helps.Lock()
	helps.m[key] = h
	helps.Unlock()
	return h, nil
}

// reserved are the flags the suite sets for each step: an option set that
// names one would change what the step is.
var reserved = map[string]string{
	"db": "the database goes in the run's sandbox", "wal_dir": "the WAL goes in the run's sandbox",
	"benchmarks": "each step runs its own", "use_existing_db": "the load makes the database, the steps after it reuse it",
	"num": "--size sets it", "threads": "the plan's --threads set it", "duration": "--seconds sets it",
	"writes": "overwritesome writes a tenth of the keys", "seed": "the plan's --seed sets it",
	"report_file": "the run's samples come from it", "report_interval_seconds": "the run's samples are per second",
	"histogram": "the latencies come from it", "flagfile": "an option set is the flag file",
}

// checkOptions checks an option set against a db_bench's flags and returns
// its flags as db_bench takes them: every name known (or a bool's no-form),
// none of those the suite sets itself, every value of the flag's type, with
// sizes written K, M, G or T (binary) turned into numbers.
func checkOptions(c config.Config, h *Help, build string) ([]string, error) {
	opts, err := config.Options(c)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range opts {
		where := "config " + c.Name // the flag names the line: o.Line counts in the effective flags, not the user's file
		key := o.Key
		f, ok := h.Flags[key]
		if !ok {
			if base, neg := strings.CutPrefix(key, "no"); neg && h.Flags[base].Type == "bool" && !o.HasValue {
				if why, r := reserved[base]; r {
					return nil, fmt.Errorf("%s: --%s is the suite's own (%s): remove it", where, o.Name, why)
				}
				out = append(out, "--no"+base)
				continue
			}
			return nil, fmt.Errorf("%s: the db_bench of build %s has no flag --%s: remove it, or see its --help for the flags it has", where, build, o.Name)
		}
		if why, r := reserved[key]; r {
			return nil, fmt.Errorf("%s: --%s is the suite's own (%s): remove it", where, o.Name, why)
		}
		v, err := flagValue(f.Type, o.Value, o.HasValue)
		if err != nil {
			return nil, fmt.Errorf("%s: --%s=%s: %v", where, o.Name, o.Value, err)
		}
		out = append(out, "--"+key+"="+v)
	}
	return out, nil
}

// flagValue checks value against a gflags type and writes it as gflags
// reads it.
func flagValue(typ, value string, has bool) (string, error) {
	switch typ {
	case "bool":
		if !has {
			return "true", nil
		}
		switch strings.ToLower(value) {
		case "true", "t", "yes", "y", "1":
			return "true", nil
		case "false", "f", "no", "n", "0":
			return "false", nil
		}
		return "", fmt.Errorf("a switch: give true or false")
	case "int32", "int64", "uint32", "uint64":
		n, err := parseSize(value)
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		switch typ {
		case "int32":
			lo, hi = math.MinInt32, math.MaxInt32
		case "uint32":
			lo, hi = 0, math.MaxUint32
		case "uint64":
			lo = 0
		}
		if err != nil || n < lo || n > hi {
			return "", fmt.Errorf("an %s: give a whole number from %d to %d (K, M, G, T: binary units)", typ, lo, hi)
		}
		return strconv.FormatInt(n, 10), nil
	case "double":
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("a double: give a finite number")
		}
		return value, nil
	}
	return value, nil
}

// parseSize reads a whole number, with K, M, G or T (KB, MB …; binary) as
// RocksDB's option strings take them.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	u := strings.ToUpper(s)
	u = strings.TrimSuffix(u, "B")
	for i, suf := range []string{"K", "M", "G", "T"} {
		if strings.HasSuffix(u, suf) && len(u) > 1 {
			mult = int64(1) << (10 * (i + 1))
			u = strings.TrimSuffix(u, suf)
			break
		}
	}
	if u != strings.ToUpper(s) && mult == 1 {
		return 0, fmt.Errorf("%q is no number", s) // a lone B
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil {
		return 0, err
	}
	if mult > 1 && (n > math.MaxInt64/mult || n < math.MinInt64/mult) {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}

// flagSetting is the value a flag has in args (the last one), else its
// default in this db_bench.
func flagSetting(args []string, h *Help, name string) string {
	v := h.Flags[name].Default
	for _, a := range args {
		if x, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			v = x
		}
	}
	return v
}
