package config

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Sizing to the host and per-version settings. Both are marked at the end of
// a setting's line, in a comment the servers skip, so that layering keeps
// the mark with the line and a config based on a preset that sets the option
// itself replaces the mark with its own line:
//
//	innodb_buffer_pool_size=10G  # qpslab: size=memory
//	innodb_log_file_size=1G  # qpslab: size=scaled
//	autovacuum_vacuum_insert_scale_factor = 0.05  # qpslab: since=13
//
// size=memory: the value (a cache: the buffer pool, shared_buffers) becomes
// MemoryShare of the host's memory, never more than the value as written,
// rounded down to 128 MiB. size=scaled: the value (redo, WAL) is scaled by
// the same ratio as the config's size=memory setting, rounded down to 64
// MiB. The sized line says the value as written and why it changed.
// since=V: ForServer leaves the setting out for a server older than V;
// since=FLAVOR-V also for a server of another flavor; only=FLAVOR for a
// server of another flavor (a preset with a MySQL and a MariaDB form).

// MemoryShare is the part of the host's memory a size=memory setting may
// take: a quarter, so that two servers side by side (qpslab's test-level
// interleaving) take half of it with their caches and leave the rest to
// their other memory, the clients and the page cache.
const MemoryShare = 4 // one part in MemoryShare

var (
	sizeMark  = regexp.MustCompile(`(?m)#\s*qpslab:\s*size=(memory|scaled)[ \t\r]*$`)
	sinceMark = regexp.MustCompile(`#\s*qpslab:\s*since=(?:([a-z]+)-)?([0-9][0-9.]*)`)
	onlyMark  = regexp.MustCompile(`#\s*qpslab:\s*only=([a-z]+)`)
	// flavorMarks are a line's only= and since= marks, whole.
	flavorMarks = regexp.MustCompile(`#\s*qpslab:\s*(?:only|since)=\S+`)
)

// hostMemory is the host's memory in bytes, MemTotal of /proc/meminfo (the
// total, not what is free now, so that a config's ID is the same from one
// run to the next on a host).
func hostMemory() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("MemTotal %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal in /proc/meminfo")
}

// memory is the host memory s sizes configs to: s.Memory, or the host's.
func (s Store) memory() (int64, error) {
	if s.Memory > 0 {
		return s.Memory, nil
	}
	return hostMemory()
}

// size rewrites the size-marked settings of content for the host's memory.
// Content without marks is returned as it is.
func (s Store) size(fam Family, content []byte) ([]byte, error) {
	if !sizeMark.Match(content) || fam == RocksDB {
		return content, nil
	}
	text := strings.TrimSuffix(string(content), "\n")
	lines := strings.Split(text, "\n")
	type marked struct {
		i           int
		kind        string
		name, value string
		n           int64
	}
	var ms []marked
	var cache *marked
	for i, raw := range lines {
		m := sizeMark.FindStringSubmatch(raw)
		if m == nil {
			continue
		}
		f, err := parse(fam, []byte(raw), "")
		if err != nil || len(f.lines) != 1 || f.lines[0].kind != settingLine {
			return nil, fmt.Errorf("line %d: %q is marked size=%s but is no setting: mark an option's line", i+1, raw, m[1])
		}
		l := f.lines[0]
		n, err := readSize(fam, l.value)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s=%s: %w", i+1, l.name, l.value, err)
		}
		ms = append(ms, marked{i, m[1], l.name, l.value, n})
		if m[1] == "memory" {
			if cache != nil {
				return nil, fmt.Errorf("line %d: %s and %s are both marked size=memory: mark one (the cache), the others size=scaled", i+1, cache.name, l.name)
			}
			cache = &ms[len(ms)-1]
		}
	}
	mem, err := s.memory()
	if err != nil {
		for _, m := range ms {
			lines[m.i] = sizeMark.ReplaceAllString(lines[m.i], "# qpslab: as written (the host's memory cannot be read: "+err.Error()+")")
		}
		return []byte(strings.Join(lines, "\n") + "\n"), nil
	}
	gib := fmt.Sprintf("%.1f GiB", float64(mem)/(1<<30))
	sized := int64(0)
	if cache != nil {
		sized = min(cache.n, max(roundDown(mem/MemoryShare, 128<<20), 128<<20))
	}
	for _, m := range ms {
		var n int64
		var why string
		switch {
		case m.kind == "memory":
			n = sized
			why = fmt.Sprintf("# qpslab: sized to this host: %s as written, 1/%d of its %s, at most as written", m.value, MemoryShare, gib)
		case cache == nil:
			lines[m.i] = sizeMark.ReplaceAllString(lines[m.i], "# qpslab: as written (no setting is marked size=memory to scale it with)")
			continue
		default:
			n = max(roundDown(int64(float64(m.n)*float64(sized)/float64(cache.n)), 64<<20), min(m.n, 64<<20))
			why = fmt.Sprintf("# qpslab: sized to this host: %s as written, scaled as %s is (%s → %s)", m.value, cache.name, cache.value, formatSize(fam, sized))
		}
		keep := "" // the line's other marks (only=, since=) stay with it
		for _, mk := range flavorMarks.FindAllString(lines[m.i], -1) {
			keep += "  " + mk
		}
		lines[m.i] = m.name + sep(fam) + formatSize(fam, n) + keep + "  " + why
	}
	return []byte(strings.Join(lines, "\n") + "\n"), nil
}

func sep(fam Family) string {
	if fam == Postgres {
		return " = "
	}
	return "="
}

func readSize(fam Family, v string) (int64, error) {
	if fam == Postgres {
		v = strings.TrimSpace(strings.Trim(v, "'"))
		if v == "" || v[len(v)-1] < 'A' {
			return 0, fmt.Errorf("a size marked for sizing needs its unit (kB, MB, GB or TB)")
		}
		return pgSize(v, 1)
	}
	return mysqlSize(v)
}

func roundDown(n, step int64) int64 { return n / step * step }

// formatSize writes n bytes as the family writes sizes: G or M (MySQL
// family), GB or MB (PostgreSQL).
func formatSize(fam Family, n int64) string {
	unit := ""
	if fam == Postgres {
		unit = "B"
	}
	if n%(1<<30) == 0 {
		return strconv.FormatInt(n>>30, 10) + "G" + unit
	}
	return strconv.FormatInt(n>>20, 10) + "M" + unit
}

// ForServer is content as a server of flavor (mariadb, mysql, postgres)
// whose version atLeast answers for takes it: a setting marked
// "# qpslab: since=V" that the server predates (an option added in V, which
// an older server would refuse to start on), "# qpslab: since=FLAVOR-V" for
// another flavor or an older version of it (MySQL 8.0.30's
// innodb_redo_log_capacity is no MariaDB option), or "# qpslab:
// only=FLAVOR" for another flavor (a preset's MySQL form beside its MariaDB
// one) becomes a comment saying why it is left out. The sandbox applies
// this.
func ForServer(content []byte, flavor string, atLeast func(string) bool) []byte {
	if !sinceMark.Match(content) && !onlyMark.Match(content) {
		return content
	}
	lines := strings.Split(string(content), "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if m := onlyMark.FindStringSubmatch(l); m != nil && m[1] != flavor {
			lines[i] = "# qpslab: left out, for " + m[1] + " only: " + t
			continue
		}
		m := sinceMark.FindStringSubmatch(l)
		switch {
		case m == nil:
		case m[1] != "" && m[1] != flavor:
			lines[i] = "# qpslab: left out, for " + m[1] + " since " + m[2] + " only: " + t
		case !atLeast(m[2]):
			for_ := "servers"
			if m[1] != "" {
				for_ = m[1]
			}
			lines[i] = "# qpslab: left out, for " + for_ + " since " + m[2] + " only: " + t
		}
	}
	return []byte(strings.Join(lines, "\n"))
}
