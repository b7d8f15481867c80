package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A MariaDB sandbox started with a config based on default runs with
// default's settings plus the variant's (the variant's winning where both set
// one), not with the server's own defaults for what the variant leaves out.
func TestLayeredConfigOnServer(t *testing.T) {
	h := newHome(t)
	b := testenv.Build(t, h, "mariadb-system")
	cs := config.Store{Dir: t.TempDir()}
	src := filepath.Join(t.TempDir(), "durable.cnf")
	if err := os.WriteFile(src, []byte("[mysqld]\ninnodb_flush_log_at_trx_commit=1\nmax_connections=123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := cs.AddWith("durable", src, config.AddOptions{Base: "default"})
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, h, sandbox.Spec{Build: b, Config: cfg})

	_, rows, err := client.Query(context.Background(), srv.Endpoint(), false,
		"SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_buffer_pool_size', 'innodb_io_capacity', 'innodb_flush_log_at_trx_commit', 'max_connections', 'log_bin')")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r[0]] = r[1]
	}
	want := map[string]string{
		"innodb_buffer_pool_size":        "2147483648", // default's 2G (MariaDB's own: 128M)
		"innodb_io_capacity":             "2000",       // default's (MariaDB's own: 200)
		"log_bin":                        "OFF",        // default's loose-skip-log-bin
		"innodb_flush_log_at_trx_commit": "1",          // the variant's over default's 2
		"max_connections":                "123",        // the variant's over default's 1000
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}

	st, err := sandbox.Get(h, srv.Name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Config != cfg.ID() {
		t.Errorf("the sandbox records config %s, want %s", st.Config, cfg.ID())
	}
	applied, err := os.ReadFile(filepath.Join(st.Dir, "my.cnf"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(applied), "max_connections=123  # from durable") || !strings.Contains(string(applied), "innodb_buffer_pool_size=2G") {
		t.Errorf("the sandbox's my.cnf is not the effective config:\n%s", applied)
	}
}
