package config

import (
	"fmt"
	"strings"
)

// MinCache is the smallest cache an iobound workload gives a server: a
// few MB above what InnoDB (5 MB) and PostgreSQL (128 kB) start with.
const MinCache = 8 << 20

// IOBound is c with its server's cache set to bytes (at least MinCache,
// whole MB) and direct IO, for an iobound workload (--workload iobound),
// laid over c's settings at its end, so that they win; and the settings
// it adds, as one line for the log. The name stays c's: a run records the
// config it was asked for, and its params the cache.
//
//   - MySQL family: innodb_buffer_pool_size, in one chunk of that size
//     (InnoDB rounds the pool up to whole chunks, 128 MB by default), and
//     innodb_flush_method=O_DIRECT unless c's flush method already
//     bypasses the OS page cache (O_DIRECT, O_DIRECT_NO_FSYNC); options a
//     server may not know are loose- (MariaDB 10.6 dropped
//     innodb_buffer_pool_instances).
//   - PostgreSQL: shared_buffers and, on 16 and later (atLeast),
//     debug_io_direct=data. An older server reads through the OS page
//     cache, which holds the tables whatever shared_buffers is: its runs
//     are judged served from memory unless the data outgrows the host's
//     memory.
func IOBound(c Config, bytes int64, atLeast func(string) bool) (Config, string, error) {
	f, err := parse(c.Family, c.Content, c.Name)
	if err != nil {
		return Config{}, "", fmt.Errorf("config %s: %w", c.Name, err)
	}
	mb := max(bytes, MinCache) >> 20
	var set []string
	switch c.Family {
	case MySQL:
		set = []string{
			fmt.Sprintf("innodb_buffer_pool_size=%dM", mb),
			fmt.Sprintf("loose-innodb_buffer_pool_chunk_size=%dM", mb),
			"loose-innodb_buffer_pool_instances=1",
		}
		if v, _ := f.last("innodb_flush_method"); !strings.HasPrefix(strings.ToUpper(strings.Trim(v, `'"`)), "O_DIRECT") {
			set = append(set, "loose-innodb_flush_method=O_DIRECT")
		}
	case Postgres:
		set = []string{fmt.Sprintf("shared_buffers = %dMB", mb)}
		if atLeast("16") {
			set = append(set, "debug_io_direct = data")
		}
	default:
		return Config{}, "", fmt.Errorf("config %s is a %s option set: --workload iobound sizes a server's cache (db_bench sizes its block cache itself)", c.Name, c.Family)
	}
	var b strings.Builder
	b.Write(c.Content)
	if len(c.Content) > 0 && c.Content[len(c.Content)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n# qpslab: --workload iobound: the cache sized to the loaded tables, direct IO\n")
	if c.Family == MySQL {
		b.WriteString("[mysqld]\n")
	}
	for _, s := range set {
		b.WriteString(s + "\n")
	}
	out := c
	out.Content = []byte(b.String())
	return out, strings.Join(set, ", "), nil
}
