package config

import (
	"fmt"
	"strings"
)

// parseFlagLine reads a line of a db_bench option set as gflags reads a
// flagfile: a blank line or a # comment, or a flag, --name=value (one or
// no dash, and the dashes may be left out: name=value), or --name alone
// (a switch). gflags takes a value to the line's end, so a # after it is
// part of the value, and dash and underscore in a name are the same.
func parseFlagLine(raw string) (line, error) {
	t := strings.TrimSpace(raw)
	if t == "" || t[0] == '#' {
		return line{kind: blankLine}, nil
	}
	body := strings.TrimPrefix(strings.TrimPrefix(t, "-"), "-")
	l := line{kind: settingLine}
	if name, value, ok := strings.Cut(body, "="); ok {
		l.name, l.value, l.eq = strings.TrimSpace(name), strings.TrimSpace(value), true
	} else if body != t {
		l.name = body // --name: a switch
	} else {
		return line{}, fmt.Errorf("%q is no flag: write --name=value (e.g. --compaction_readahead_size=96K)", t)
	}
	if l.name == "" || strings.ContainsAny(l.name, " \t") {
		return line{}, fmt.Errorf("%q has no flag name: write --name=value", t)
	}
	l.key = strings.ReplaceAll(l.name, "-", "_")
	return l, nil
}

// Option is one setting of a db_bench option set.
type Option struct {
	Name     string // as written, without dashes
	Key      string // the name with dashes as underscores, as db_bench --help lists it
	Value    string // "" for a switch (--name) or an empty value
	HasValue bool   // written with "="
	Line     int    // in the effective content, 1-based
}

// Flag is the option as db_bench takes it: --name=value, or --name.
func (o Option) Flag() string {
	if o.HasValue {
		return "--" + o.Name + "=" + o.Value
	}
	return "--" + o.Name
}

// Options reads the settings of a rocksdb config's effective content: one
// per name, the last line of a name winning (as gflags reads the file), in
// the order the names first appear.
func Options(c Config) ([]Option, error) {
	if c.Family != RocksDB {
		return nil, fmt.Errorf("config %s is a %s config, not a db_bench option set", c.Name, c.Family)
	}
	f, err := parse(RocksDB, c.Content, c.Name)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", c.Name, err)
	}
	var out []Option
	at := map[string]int{}
	for i, l := range f.lines {
		if l.kind != settingLine {
			continue
		}
		o := Option{Name: l.name, Key: l.key, Value: l.value, HasValue: l.eq, Line: i + 1}
		if j, ok := at[o.Key]; ok {
			out[j] = o
			continue
		}
		at[o.Key] = len(out)
		out = append(out, o)
	}
	return out, nil
}
