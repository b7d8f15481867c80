package config_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/testenv"
)

// The seeds' presets, their family, the cache they size and its value as
// the reference author wrote it.
var presets = []struct {
	name   string
	fam    config.Family
	cache  string
	author int64
}{
	{"cz11a_bee", config.MySQL, "innodb_buffer_pool_size", 10 << 30},
	{"cz11b_bee", config.MySQL, "innodb_buffer_pool_size", 10 << 30},
	{"cx9a2a_bee", config.Postgres, "shared_buffers", 10 << 30},
	{"cz11a1_bee", config.MySQL, "innodb_buffer_pool_size", 8 << 30},
	{"cz11b1_bee", config.MySQL, "innodb_buffer_pool_size", 8 << 30},
	{"cz11c_bee", config.MySQL, "innodb_buffer_pool_size", 10 << 30},
	{"cz11d_bee", config.MySQL, "innodb_buffer_pool_size", 10 << 30},
	{"cz11d1_bee", config.MySQL, "innodb_buffer_pool_size", 8 << 30},
}

// setting is the last value content gives key (a MySQL option may carry
// loose-), with its end comment cut.
func setting(content []byte, key string) string {
	re := regexp.MustCompile(`(?m)^(?:loose-)?` + key + `\s*=\s*([^#\n]*?)\s*(?:#.*)?$`)
	v := ""
	for _, m := range re.FindAllSubmatch(content, -1) {
		v = string(m[1])
	}
	return v
}

// Each preset parses, names its source, and is sized to the host: a quarter
// of an 8 GB host's memory, the author's own size on a 64 GB one, never more
// than either; the redo or WAL scaled by the same ratio.
func TestPresetsSizedToTheHost(t *testing.T) {
	scaled := map[string]map[string]int64{ // setting: as written, in MiB
		"cz11a_bee":  {"innodb_log_file_size": 1 << 10},
		"cz11b_bee":  {"innodb_log_file_size": 15 << 10},
		"cx9a2a_bee": {"max_wal_size": 40 << 10, "min_wal_size": 20 << 10},
		"cz11a1_bee": {"innodb_log_file_size": 4 << 10},
		"cz11b1_bee": {"innodb_log_file_size": 4 << 10},
		"cz11c_bee":  {"innodb_log_file_size": 15 << 10, "innodb_redo_log_capacity": 15 << 10},
		"cz11d_bee":  {"innodb_log_file_size": 15 << 10, "innodb_redo_log_capacity": 15 << 10},
		"cz11d1_bee": {"innodb_log_file_size": 4 << 10},
	}
	for _, p := range presets {
		t.Run(p.name, func(t *testing.T) {
			got := map[int64]int64{}
			for _, mem := range []int64{8 << 30, 64 << 30} {
				c, err := config.Store{Dir: t.TempDir(), Memory: mem}.Get(p.name, p.fam)
				if err != nil {
					t.Fatal(err)
				}
				if c.Source != "shipped" || !strings.Contains(string(c.Content), "Source: the reference author's") || !strings.Contains(string(c.Content), "What qpslab changed:") {
					t.Errorf("%s does not say where it comes from and what qpslab changed:\n%s", p.name, c.Content)
				}
				n, what, err := config.Memory(c)
				if err != nil {
					t.Fatal(err)
				}
				want := min(p.author, mem/config.MemoryShare)
				if n != want || n <= 0 {
					t.Errorf("host of %d GiB: %s, want %d MiB", mem>>30, what, want>>20)
				}
				got[mem] = n
				// Two servers side by side (test-level interleaving in pairs)
				// must pass the plan's memory check: their caches and 256 MB
				// each within 80 % of the available memory, taken here as 90 %
				// of the total.
				if two := 2 * (n + 256<<20); float64(two) > 0.8*0.9*float64(mem) {
					t.Errorf("host of %d GiB: two servers of %s need %d MiB, more than the plan lets them have", mem>>30, what, two>>20)
				}
				if !strings.Contains(string(c.Content), "qpslab: sized to this host") {
					t.Errorf("the sized lines do not say so:\n%s", c.Content)
				}
				for k, wrote := range scaled[p.name] {
					v := setting(c.Content, k)
					mib := map[string]int64{"G": 1 << 10, "GB": 1 << 10, "M": 1, "MB": 1}
					var num int64
					var unit string
					for i, r := range v {
						if r < '0' || r > '9' {
							unit = v[i:]
							break
						}
						num = num*10 + int64(r-'0')
					}
					w := wrote * want / p.author
					if m := num * mib[unit]; m > w || m < w-64 || m <= 0 {
						t.Errorf("host of %d GiB: %s = %s, want about %d MiB (%d MiB as written, scaled as the cache)", mem>>30, k, v, w, wrote)
					}
				}
			}
			if got[8<<30] == got[64<<30] {
				t.Errorf("hosts of 8 and 64 GiB get the same cache, %d bytes", got[8<<30])
			}
			// A config based on the preset is sized too, and its own cache
			// setting is left as the user wrote it.
			s := config.Store{Dir: t.TempDir(), Memory: 8 << 30}
			src := filepath.Join(t.TempDir(), "mine"+p.fam.Ext())
			own := p.cache + "=3G\n"
			if p.fam == config.Postgres {
				own = p.cache + " = 3GB\n"
			}
			if err := os.WriteFile(src, []byte(own), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := s.AddWith("mine", src, config.AddOptions{Base: p.name})
			if err != nil {
				t.Fatal(err)
			}
			if n, what, _ := config.Memory(c); n != 3<<30 {
				t.Errorf("a config based on %s that sets %s=3G gets %s", p.name, p.cache, what)
			}
		})
	}
}

// No preset names a path: the sandbox owns datadir, socket, logs and the
// rest, so no value holds a slash and no option that takes a path is set.
func TestPresetsNameNoPath(t *testing.T) {
	pathOptions := regexp.MustCompile(`(?m)^\s*(?:loose-)?(datadir|basedir|tmpdir|socket|pid[-_]file|log[-_]error|log[-_]bin[-_]index|general[-_]log[-_]file|slow[-_]query[-_]log[-_]file|innodb[-_]data[-_]home[-_]dir|innodb[-_]log[-_]group[-_]home[-_]dir|innodb[-_]undo[-_]directory|malloc[-_]lib|plugin[-_]dir|secure[-_]file[-_]priv|data_directory|hba_file|ident_file|config_file|external_pid_file|unix_socket_directories|log_directory|stats_temp_directory)\s*=`)
	value := regexp.MustCompile(`(?m)^\s*[^#;\s][^=#\n]*=\s*([^#\n]*)`)
	for _, p := range presets {
		c, err := config.Store{Dir: t.TempDir(), Memory: 16 << 30}.Get(p.name, p.fam)
		if err != nil {
			t.Fatal(err)
		}
		if m := pathOptions.Find(c.Content); m != nil {
			t.Errorf("%s sets %q: that path is the sandbox's", p.name, m)
		}
		for _, m := range value.FindAllSubmatch(c.Content, -1) {
			if strings.ContainsAny(string(m[1]), `/\`) {
				t.Errorf("%s: %q holds a path", p.name, m[0])
			}
		}
	}
}

// An option PostgreSQL 12 does not know is left out for it, said so in its
// place, and kept for 13 and later.
func TestForVersion(t *testing.T) {
	c, err := config.Store{Dir: t.TempDir(), Memory: 16 << 30}.Get("cx9a2a_bee", config.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	atLeast := func(have string) func(string) bool {
		return func(v string) bool { return strings.Split(have, ".")[0] >= v } // majors of two digits here
	}
	old := config.ForServer(c.Content, "postgres", atLeast("12.17.0"))
	if setting(old, "autovacuum_vacuum_insert_scale_factor") != "" || !strings.Contains(string(old), "# qpslab: left out, for servers since 13 only: autovacuum_vacuum_insert_scale_factor") {
		t.Errorf("for PostgreSQL 12 the option added in 13 must be a comment saying so:\n%s", old)
	}
	for _, v := range []string{"13.0", "18.2.0"} {
		if got := config.ForServer(c.Content, "postgres", atLeast(v)); string(got) != string(c.Content) {
			t.Errorf("for %s the content must be as it is:\n%s", v, got)
		}
	}
	def, _ := config.Store{Dir: t.TempDir()}.Get("default", config.MySQL)
	if got := config.ForServer(def.Content, "mariadb", atLeast("1")); string(got) != string(def.Content) {
		t.Errorf("content without since= marks must be as it is")
	}
}

// Real servers start with the presets (sized to a host of 2 GiB, so that
// they stay small): MariaDB from Debian with both MariaDB presets, and
// MariaDB 10.2 with cz11a_bee and 11.4 with both (options a version lacks
// carry loose-);
// PostgreSQL from Debian and PostgreSQL 12 (which lacks an option the preset
// sets) with cx9a2a_bee. Each runs with the preset's settings.
func TestPresetsStartServers(t *testing.T) {
	if testing.Short() {
		testenv.Skip(t, "-short: it starts servers")
	}
	cases := []struct {
		build, preset string
		want          map[string]string
	}{
		{"mariadb-system", "cz11a_bee", map[string]string{"innodb_buffer_pool_size": "536870912", "innodb_flush_method": "O_DIRECT_NO_FSYNC", "log_bin": "ON", "innodb_io_capacity": "10000"}},
		{"mariadb-system", "cz11b_bee", map[string]string{"innodb_buffer_pool_size": "536870912", "innodb_flush_method": "O_DIRECT", "innodb_log_file_size": "805306368", "innodb_lru_scan_depth": "5000"}},
		{"mariadb-10.2.11", "cz11a_bee", map[string]string{"innodb_buffer_pool_size": "536870912", "innodb_flush_method": "O_DIRECT_NO_FSYNC", "innodb_log_files_in_group": "15", "innodb_change_buffering": "none"}},
		{"mariadb-11.4.5", "cz11b_bee", map[string]string{"innodb_buffer_pool_size": "536870912", "innodb_flush_method": "O_DIRECT", "innodb_log_file_size": "805306368", "innodb_checksum_algorithm": "crc32"}},
		{"mariadb-11.4.5", "cz11a_bee", map[string]string{"innodb_buffer_pool_size": "536870912", "innodb_flush_method": "O_DIRECT_NO_FSYNC", "innodb_io_capacity": "10000"}},
		{"postgres-system", "cx9a2a_bee", map[string]string{"shared_buffers": "512MB", "max_wal_size": "2GB", "autovacuum_vacuum_insert_scale_factor": "0.05", "synchronous_commit": "off"}},
		{"postgres-12.17.0", "cx9a2a_bee", map[string]string{"shared_buffers": "512MB", "max_wal_size": "2GB", "synchronous_commit": "off"}},
		// The seeds' other configs: the MariaDB variants, and the MySQL forms
		// of cz11c_bee and cz11d_bee on Debian's newest MySQL.
		{"mariadb-system", "cz11a1_bee", map[string]string{"innodb_buffer_pool_size": "536870912", "innodb_flush_method": "O_DIRECT_NO_FSYNC", "innodb_log_file_size": "268435456", "innodb_change_buffering": "none"}},
		{"mariadb-system", "cz11d1_bee", map[string]string{"innodb_buffer_pool_size": "536870912", "innodb_change_buffering": "all"}},
		{"mariadb-system", "cz11c_bee", map[string]string{"innodb_flush_method": "fsync", "innodb_log_file_size": "805306368", "query_cache_type": "OFF", "innodb_lru_scan_depth": "5000"}},
		{"mariadb-system", "cz11d_bee", map[string]string{"innodb_flush_method": "O_DIRECT_NO_FSYNC", "innodb_change_buffering": "all"}},
		{"mariadb-11.4.5", "cz11b1_bee", map[string]string{"innodb_buffer_pool_size": "536870912", "innodb_flush_method": "O_DIRECT", "innodb_log_file_buffering": "ON", "innodb_data_file_buffering": "OFF"}},
		{testenv.MySQL, "cz11c_bee", map[string]string{"innodb_buffer_pool_size": "536870912", "innodb_flush_method": "fsync", "innodb_redo_log_capacity": "805306368", "innodb_dedicated_server": "ON"}},
		{testenv.MySQL, "cz11d_bee", map[string]string{"innodb_flush_method": "O_DIRECT_NO_FSYNC", "innodb_redo_log_capacity": "805306368", "innodb_page_cleaners": "1", "performance_schema": "ON"}},
	}
	for _, tc := range cases {
		t.Run(tc.build+"/"+tc.preset, func(t *testing.T) {
			srv, _ := testenv.StartServerFrom(t, tc.build, tc.preset, config.Store{Dir: t.TempDir(), Memory: 2 << 30})
			for k, w := range tc.want {
				q, col := "SHOW GLOBAL VARIABLES LIKE '"+k+"'", 1
				if srv.Endpoint().Protocol == client.Postgres {
					q, col = "SHOW "+k, 0
				}
				_, rows, err := client.Query(context.Background(), srv.Endpoint(), false, q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if len(rows) != 1 || len(rows[0]) != col+1 || rows[0][col] != w {
					t.Errorf("%s: %q, want %s", q, rows, w)
				}
			}
		})
	}
}

// Size marks that cannot be followed are refused in one line naming the
// line and the fix.
func TestSizeMarksRefused(t *testing.T) {
	for _, c := range []struct {
		name, file, content string
		want                []string
	}{
		{"two caches", "two.cnf", "[mysqld]\ninnodb_buffer_pool_size=4G  # qpslab: size=memory\nrocksdb_block_cache_size=4G  # qpslab: size=memory\n",
			[]string{"line 3", "both marked size=memory", "mark one (the cache)"}},
		{"not a size", "bad.cnf", "[mysqld]\ninnodb_buffer_pool_size=lots  # qpslab: size=memory\n",
			[]string{"line 2", "innodb_buffer_pool_size=lots", "not a size"}},
		{"no unit", "nounit.conf", "shared_buffers = 1280  # qpslab: size=memory\n",
			[]string{"line 1", "needs its unit"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := config.Store{Dir: t.TempDir(), Memory: 8 << 30}
			src := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(src, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := s.AddWith("x", src, config.AddOptions{Base: "none"})
			testenv.WantErr(t, err, c.want...)
		})
	}
	// A scaled setting without a cache to scale with stays as written, and
	// says so.
	s := config.Store{Dir: t.TempDir(), Memory: 8 << 30}
	src := filepath.Join(t.TempDir(), "wal.conf")
	if err := os.WriteFile(src, []byte("max_wal_size = 40GB  # qpslab: size=scaled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := s.AddWith("wal", src, config.AddOptions{Base: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if setting(c.Content, "max_wal_size") != "40GB" || !strings.Contains(string(c.Content), "as written (no setting is marked size=memory") {
		t.Errorf("a scaled setting without a cache:\n%s", c.Content)
	}
}

// A mark may name a flavor: only=FLAVOR keeps a line for that flavor's
// servers alone, since=FLAVOR-V for that flavor's from V on; a plain
// since=V is any flavor's. Each line left out says so in its place.
func TestForServerFlavors(t *testing.T) {
	content := []byte("[mysqld]\ncommon=1\nquery_cache_size=0  # qpslab: only=mariadb\n" +
		"innodb_redo_log_capacity=2G  # qpslab: since=mysql-8.0.30\ninnodb_dedicated_server=ON  # qpslab: only=mysql\nnew_option=1  # qpslab: since=10.6\n")
	atLeast := func(have string) func(string) bool {
		return func(v string) bool { return build.CompareVersions(have, v) >= 0 }
	}
	for _, c := range []struct {
		flavor, version string
		keep, drop      []string
	}{
		{"mariadb", "10.11.19", []string{"common=1", "query_cache_size=0", "new_option=1"},
			[]string{"# qpslab: left out, for mysql since 8.0.30 only: innodb_redo_log_capacity", "# qpslab: left out, for mysql only: innodb_dedicated_server"}},
		{"mariadb", "10.2.11", []string{"query_cache_size=0"}, []string{"# qpslab: left out, for servers since 10.6 only: new_option"}},
		{"mysql", "8.0.29", []string{"innodb_dedicated_server=ON"}, []string{"# qpslab: left out, for mysql since 8.0.30 only: innodb_redo_log_capacity", "# qpslab: left out, for mariadb only: query_cache_size"}},
		// A plain since= compares versions only: MySQL 9.7 is older than 10.6
		// (a preset for both flavors names the flavor in its marks).
		{"mysql", "9.7.4", []string{"innodb_redo_log_capacity=2G", "innodb_dedicated_server=ON"},
			[]string{"# qpslab: left out, for mariadb only: query_cache_size", "# qpslab: left out, for servers since 10.6 only: new_option"}},
	} {
		got := string(config.ForServer(content, c.flavor, atLeast(c.version)))
		for _, k := range c.keep {
			if !strings.Contains(got, "\n"+k) {
				t.Errorf("%s %s: %q left out:\n%s", c.flavor, c.version, k, got)
			}
		}
		for _, d := range c.drop {
			if !strings.Contains(got, d) {
				t.Errorf("%s %s: want %q:\n%s", c.flavor, c.version, d, got)
			}
		}
	}
}
