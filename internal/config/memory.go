package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Memory is what a server started with c sets aside for its caches, in
// bytes, and what it is made of ("innodb_buffer_pool_size=2G"): on the
// MySQL family InnoDB's buffer pool (128 MiB when c sets none, the
// servers' default) and, when c sets it, MyRocks' block cache; on
// PostgreSQL shared_buffers (128 MB by default). A plan that keeps several
// servers up at once checks their sum against the host's free memory.
// A db_bench option set holds no server: 0.
func Memory(c Config) (int64, string, error) {
	f, err := parse(c.Family, c.Content, c.Name)
	if err != nil {
		return 0, "", fmt.Errorf("config %s: %w", c.Name, err)
	}
	last := f.last
	switch c.Family {
	case MySQL:
		total, parts := int64(128<<20), []string{"innodb_buffer_pool_size=128M (default)"}
		if v, ok := last("innodb_buffer_pool_size"); ok {
			n, err := mysqlSize(v)
			if err != nil {
				return 0, "", fmt.Errorf("config %s: innodb_buffer_pool_size=%s: %w", c.Name, v, err)
			}
			total, parts = n, []string{"innodb_buffer_pool_size=" + v}
		}
		if v, ok := last("rocksdb_block_cache_size"); ok {
			n, err := mysqlSize(v)
			if err != nil {
				return 0, "", fmt.Errorf("config %s: rocksdb_block_cache_size=%s: %w", c.Name, v, err)
			}
			total += n
			parts = append(parts, "rocksdb_block_cache_size="+v)
		}
		return total, strings.Join(parts, " + "), nil
	case Postgres:
		v, ok := last("shared_buffers")
		if !ok {
			return 128 << 20, "shared_buffers=128MB (default)", nil
		}
		n, err := pgSize(strings.Trim(v, "'"), 8<<10)
		if err != nil {
			return 0, "", fmt.Errorf("config %s: shared_buffers=%s: %w", c.Name, v, err)
		}
		return n, "shared_buffers=" + v, nil
	}
	return 0, "", nil
}

// last is the value of the server's last setting of one of keys, and
// whether there is one.
func (f fragment) last(keys ...string) (string, bool) {
	v, found := "", false
	for _, l := range f.lines {
		if l.kind != settingLine || !serverSection(f.fam, l.section) {
			continue
		}
		for _, k := range keys {
			if l.key == k {
				v, found = l.value, true
			}
		}
	}
	return v, found
}

// serverSection says whether a MySQL-family server reads options of this
// section ([mysqld], [server], [mariadb], [mariadbd] and their versioned
// forms); PostgreSQL has none.
func serverSection(fam Family, s string) bool {
	if fam != MySQL {
		return true
	}
	for _, p := range []string{"mysqld", "server", "mariadb", "mariadbd"} {
		if s == p || strings.HasPrefix(s, p+"-") {
			return true
		}
	}
	return false
}

// mysqlSize reads a size as my_getopt does: a whole number with an
// optional K, M, G, T, P or E suffix (powers of 1024, either case).
func mysqlSize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	if v != "" {
		switch strings.ToUpper(v[len(v)-1:]) {
		case "K":
			mult = 1 << 10
		case "M":
			mult = 1 << 20
		case "G":
			mult = 1 << 30
		case "T":
			mult = 1 << 40
		case "P":
			mult = 1 << 50
		case "E":
			mult = 1 << 60
		}
		if mult > 1 {
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("not a size (a whole number with K, M, G or T)")
	}
	return n * mult, nil
}

// pgSize reads a PostgreSQL memory setting: a whole number with a unit
// (B, kB, MB, GB, TB, case-sensitive as the server takes them), or
// without one in the setting's own unit (shared_buffers: 8 kB blocks).
func pgSize(v string, unit int64) (int64, error) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a size (a whole number with kB, MB, GB or TB)")
	}
	switch strings.TrimSpace(v[i:]) {
	case "":
	case "B":
		unit = 1
	case "kB":
		unit = 1 << 10
	case "MB":
		unit = 1 << 20
	case "GB":
		unit = 1 << 30
	case "TB":
		unit = 1 << 40
	default:
		return 0, fmt.Errorf("unit %q is not one of B, kB, MB, GB, TB", strings.TrimSpace(v[i:]))
	}
	if n > math.MaxInt64/unit {
		return 0, fmt.Errorf("too large")
	}
	return n * unit, nil
}
