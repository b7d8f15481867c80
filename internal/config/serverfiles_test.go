package config_test

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A setting that points the server at a file outside its sandbox is
// refused in one line naming it and the flag that allows it, however the
// family's parser spells it (dashes, loose-, quotes, escapes, a library
// list, an include); the sandbox's own relative paths and the servers'
// own libraries pass, and so does what --allow-server-file names.
func TestServerFilesRefused(t *testing.T) {
	for _, c := range []struct {
		what    string
		fam     config.Family
		content string
		allow   []string
		bad     []string // the paths refused; none: it passes
	}{
		{"init_file", config.MySQL, "[mysqld]\ninit_file=/etc/shadow\n", nil, []string{"/etc/shadow"}},
		{"dashes, loose- and quotes", config.MySQL, "[mysqld]\nloose-init-file = \"/etc/shadow\"  # from x\n", nil, []string{"/etc/shadow"}},
		{"before any section", config.MySQL, "ssl-key=/root/k.pem\nssl_cert=/root/c.pem\n", nil, []string{"/root/k.pem", "/root/c.pem"}},
		{"an escape", config.MySQL, "[mysqld]\nplugin_dir='\\\\tmp'\ngeneral_log_file=~/g.log\n", nil, []string{"~/g.log"}},
		{"climbing out", config.MySQL, "[mysqld]\nsecure-file-priv=files/../../..\n", nil, []string{"files/../../.."}},
		{"the sandbox's own", config.MySQL, "[mysqld]\ninit_file=init.sql\nlog_bin=binlog\nplugin-load-add=ha_rocksdb.so\n", nil, nil},
		{"a client section", config.MySQL, "[client]\nssl-key=/root/k.pem\n[mysqld]\nport=1\n", nil, nil},
		{"a library with a path", config.MySQL, "[mysqld]\nplugin_load=\"rocksdb=ha_rocksdb.so;evil=/tmp/evil.so\"\n", nil, []string{"/tmp/evil.so"}},
		{"an include", config.MySQL, "[mysqld]\n!includedir /etc/mysql/conf.d\n", nil, []string{"/etc/mysql/conf.d"}},
		{"allowed", config.MySQL, "[mysqld]\nssl_key=/etc/ssl/private/k.pem\nssl_ca=/etc/ssl2/ca.pem\n", []string{"/etc/ssl/"}, []string{"/etc/ssl2/ca.pem"}},
		{"PostgreSQL's keys", config.Postgres, "ssl_key_file = '/etc/ssl/private/k.pem'\nHBA_FILE '/etc/x'\n", nil, []string{"/etc/ssl/private/k.pem", "/etc/x"}},
		{"an octal escape", config.Postgres, "ident_file = '\\057etc/shadow'\n", nil, []string{"/etc/shadow"}},
		{"PostgreSQL's includes", config.Postgres, "include 'extra.conf'\ninclude_if_exists = '/etc/pg.conf'\n", nil, []string{"/etc/pg.conf"}},
		{"PostgreSQL's libraries", config.Postgres, "shared_preload_libraries = 'pg_stat_statements,$libdir/auto_explain,/tmp/e.so'\ndynamic_library_path = '$libdir:/opt/lib'\n", nil, []string{"/tmp/e.so", "/opt/lib"}},
		{"a command", config.Postgres, "archive_mode = on\narchive_command = 'cp %p /mnt/wal/%f'\n", nil, []string{"cp %p /mnt/wal/%f"}},
		{"a command allowed as written", config.Postgres, "archive_command = 'cp %p /mnt/wal/%f'\n", []string{"cp %p /mnt/wal/%f"}, nil},
		{"an empty command", config.Postgres, "archive_command = ''\n", nil, nil},
		{"db_bench starts no server", config.RocksDB, "--db=/tmp/x\n", nil, nil},
	} {
		t.Run(c.what, func(t *testing.T) {
			cfg := config.Config{Name: "c1", Family: c.fam, Content: []byte(c.content)}
			err := config.CheckServerFiles(cfg, c.allow)
			if len(c.bad) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			testenv.WantErr(t, err, "config c1 sets", "outside the sandbox", "--allow-server-file")
			if err == nil {
				return
			}
			for _, p := range c.bad {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("%q does not name %s", err, p)
				}
			}
			if c.allow != nil && strings.Contains(err.Error(), "/etc/ssl/private") {
				t.Errorf("%q names what --allow-server-file let through", err)
			}
		})
	}
}

// The flag that lets a file through is given ready to paste: a path with
// a space or a quote is one shell word, and a hostile value keeps the
// message on one line.
func TestServerFilesMessage(t *testing.T) {
	cfg := config.Config{Name: "c1", Family: config.Postgres, Content: []byte("hba_file = '/etc/it''s here'\nident_file = '/etc/a\\nb'\n")}
	err := config.CheckServerFiles(cfg, nil)
	testenv.WantErr(t, err, `--allow-server-file '/etc/it'\''s here'`, `--allow-server-file '/etc/a\nb'`, `ident_file='/etc/a\nb'`)
}

// --set and --grid settings are checked before a config is derived from
// them, in the family that has the option.
func TestGridServerFiles(t *testing.T) {
	for _, c := range []struct {
		sets  []string
		allow []string
		bad   string
	}{
		{[]string{"init_file=/etc/shadow"}, nil, "init_file=/etc/shadow"},
		{[]string{"loose-init-file=/etc/shadow"}, nil, "loose-init-file=/etc/shadow"},
		{[]string{"ssl_key_file=/k.pem"}, nil, "ssl_key_file=/k.pem"},
		{[]string{"innodb_io_capacity=2000", "20000", "general_log_file=g.log", "/var/log/g.log"}, nil, "general_log_file=/var/log/g.log"},
		{[]string{"init_file=/etc/shadow"}, []string{"/etc/shadow"}, ""},
		{[]string{"innodb_io_capacity=2000", "20000"}, nil, ""},
	} {
		g, err := config.ParseSets(c.sets)
		if err != nil {
			t.Fatal(err)
		}
		err = g.CheckServerFiles("", c.allow)
		if c.bad == "" {
			if err != nil {
				t.Errorf("--set %s: %v", c.sets, err)
			}
			continue
		}
		testenv.WantErr(t, err, "--set/--grid sets "+c.bad, "--allow-server-file")
		if err != nil && strings.Contains(err.Error(), "general_log_file=g.log") {
			t.Errorf("%q refuses the relative g.log", err)
		}
	}
	// An option of the other family, or a db_bench flag, is not the server's.
	g, _ := config.ParseSets([]string{"ssl_key_file=/k.pem"})
	if err := g.CheckServerFiles(config.MySQL, nil); err != nil {
		t.Errorf("a PostgreSQL option on MySQL: %v", err)
	}
	if err := g.CheckServerFiles(config.RocksDB, nil); err != nil {
		t.Errorf("a db_bench grid: %v", err)
	}
	testenv.WantErr(t, g.CheckServerFiles(config.Postgres, nil), "ssl_key_file=/k.pem")
}

// No shipped config points a server outside its sandbox.
func TestShippedNameNoServerFile(t *testing.T) {
	cs, err := config.Store{Dir: t.TempDir(), Memory: 16 << 30}.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if err := config.CheckServerFiles(c, nil); err != nil {
			t.Errorf("%s (%s): %v", c.Name, c.Family, err)
		}
	}
}
