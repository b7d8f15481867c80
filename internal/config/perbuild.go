package config

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// PerBuild maps builds to configs, as the reference's per-version config
// folders do (its sysbench posts run MariaDB 10.x with cz11a_bee and 11.x
// with cz11b_bee): each build of a run or a study runs with the config of
// the first rule that matches it, and with no other.
type PerBuild []Rule

// Rule is one mapping: the builds it matches and their config.
//
// Builds is a build's name (mariadb-10.11), a glob over build names
// (mariadb-10.*), or a range of versions A..B, inclusive, either end
// open (10.2..10.11, 11.0.., ..10), matched against the build's version on
// the parts each end gives: ..10 holds every 10.x.y, 11.0.. every version
// from 11.0.0 on.
type Rule struct {
	Builds string
	Config string
}

// shippedMaps are the maps qpslab ships, by name: the reference's
// per-version MariaDB configs for the small server (the "_bee" host class)
// that its posts' folders cz11a_bee and cz11b_bee hold (MariaDB 11.4
// removed the change buffer, and 11.x runs use the b variant, with
// O_DIRECT and one redo file).
var shippedMaps = map[string]PerBuild{
	"cz11_bee": {{"..10", "cz11a_bee"}, {"11..", "cz11b_bee"}},
}

// ShippedMaps are the names of the shipped maps, each with its rules as
// --config-for takes them.
func ShippedMaps() map[string]string {
	out := map[string]string{}
	for name, m := range shippedMaps {
		out[name] = m.String()
	}
	return out
}

// String is the map as --config-for takes it.
func (m PerBuild) String() string {
	var parts []string
	for _, r := range m {
		parts = append(parts, r.Builds+"="+r.Config)
	}
	return strings.Join(parts, ",")
}

// maxRules bounds a map: more rules than builds anyone sweeps is input
// gone wrong.
const maxRules = 100

// ParsePerBuild reads --config-for's values: rules BUILDS=CONFIG, or the
// name of a shipped map (cz11_bee). Each problem is one line naming the fix.
func ParsePerBuild(parts []string) (PerBuild, error) {
	var m PerBuild
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !strings.Contains(p, "=") {
			sm, ok := shippedMaps[p]
			if !ok {
				return nil, fmt.Errorf("--config-for %s: not a rule BUILDS=CONFIG (mariadb-10.*=cz11a_bee, 10.2..10.11=cz11a_bee) nor a shipped map (%s)", strconv.Quote(p), shippedList())
			}
			m = append(m, sm...)
			continue
		}
		builds, cfg, _ := strings.Cut(p, "=")
		builds, cfg = strings.TrimSpace(builds), strings.TrimSpace(cfg)
		if len(cfg) > 100 || !nameRE.MatchString(cfg) {
			return nil, fmt.Errorf("--config-for %s: config name %s is not valid: use letters, digits, _ and - (e.g. cz11a_bee)", strconv.Quote(p), strconv.Quote(cfg))
		}
		if err := checkBuilds(builds); err != nil {
			return nil, fmt.Errorf("--config-for %s: %v", strconv.Quote(p), err)
		}
		m = append(m, Rule{builds, cfg})
	}
	if len(m) > maxRules {
		return nil, fmt.Errorf("--config-for: %d rules; give at most %d", len(m), maxRules)
	}
	return m, nil
}

func shippedList() string {
	var names []string
	for name, m := range shippedMaps {
		names = append(names, name+": "+m.String())
	}
	return strings.Join(names, "; ")
}

// checkBuilds checks a rule's builds: a version range of dotted numbers,
// or a build name or glob of the characters build names take.
func checkBuilds(s string) error {
	if s == "" {
		return fmt.Errorf("name the builds before '=': a build, a glob (mariadb-10.*) or a version range (10.2..10.11)")
	}
	if lo, hi, ok := strings.Cut(s, ".."); ok {
		if lo == "" && hi == "" {
			return fmt.Errorf("the range '..' names no version: give A..B, A.. or ..B (10.2..10.11)")
		}
		for _, v := range []string{lo, hi} {
			if v != "" && !dotted(v) {
				return fmt.Errorf("%s is not a version: a range's ends are dotted numbers (10.2..10.11)", strconv.Quote(v))
			}
		}
		return nil
	}
	if len(s) > 200 {
		return fmt.Errorf("a rule's builds of %d bytes: give at most 200", len(s))
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+*?", r)) {
			return fmt.Errorf("%s: a build name or glob takes letters, digits and . _ - + * ?", strconv.Quote(s))
		}
	}
	if _, err := path.Match(s, ""); err != nil {
		return fmt.Errorf("%s: %v", strconv.Quote(s), err)
	}
	return nil
}

// dotted says whether v is a dotted version of numbers (10, 10.11, 11.4.2).
func dotted(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 1e6 || p != strconv.Itoa(n) {
			return false
		}
	}
	return true
}

// ConfigFor is the config of the first rule that matches the build of
// this name and version ("", false when none does).
func (m PerBuild) ConfigFor(name, version string) (string, bool) {
	for _, r := range m {
		if r.matches(name, version) {
			return r.Config, true
		}
	}
	return "", false
}

// Configs are the configs the rules name, each once, in their order.
func (m PerBuild) Configs() []string {
	var out []string
	for _, r := range m {
		if !contains(out, r.Config) {
			out = append(out, r.Config)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (r Rule) matches(name, version string) bool {
	lo, hi, isRange := strings.Cut(r.Builds, "..")
	if !isRange {
		ok, _ := path.Match(r.Builds, name)
		return ok
	}
	if version == "" {
		return false
	}
	if lo != "" && compareOn(version, lo) < 0 {
		return false
	}
	return hi == "" || compareOn(version, hi) <= 0
}

// compareOn compares version v with bound b on the parts b gives (v
// 10.11.9 against 10.11 compares 10.11): -1, 0 or 1.
func compareOn(v, b string) int {
	vs, bs := strings.Split(v, "."), strings.Split(b, ".")
	for i := range bs {
		x := 0
		if i < len(vs) {
			x, _ = strconv.Atoi(vs[i])
		}
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
