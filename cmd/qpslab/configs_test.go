package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// configs add bases a file on default unless told; show prints the
// effective settings, --own the file, and finds a config in either family.
func TestConfigsLayered(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "durable.cnf")
	os.WriteFile(f, []byte("[mysqld]\ninnodb_flush_log_at_trx_commit=1\nmax_connections=100\n"), 0o644)
	r := qpslab(t, h, "configs", "add", "durable", f)
	if r.code != 0 || !strings.Contains(r.stdout, "based on default") {
		t.Fatalf("configs add: %+v", r)
	}
	r = qpslab(t, h, "configs", "show", "durable")
	for _, want := range []string{"innodb_buffer_pool_size=2G\n", "innodb_flush_log_at_trx_commit=1  # from durable\n", "max_connections=100  # from durable\n"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("configs show durable lacks %q: %+v", want, r)
		}
	}
	if strings.Contains(r.stdout, "max_connections=1000") {
		t.Errorf("configs show durable keeps default's max_connections:\n%s", r.stdout)
	}
	r = qpslab(t, h, "configs", "show", "durable", "--own")
	if want := "# qpslab: base=default\n[mysqld]\ninnodb_flush_log_at_trx_commit=1\nmax_connections=100\n"; r.stdout != want {
		t.Errorf("configs show --own = %q, want %q", r.stdout, want)
	}

	if r := qpslab(t, h, "configs", "add", "plain", f, "--base", "none"); r.code != 0 || !strings.Contains(r.stdout, "no base") {
		t.Errorf("configs add --base none: %+v", r)
	}
	if r := qpslab(t, h, "configs", "show", "plain"); r.stdout != "[mysqld]\ninnodb_flush_log_at_trx_commit=1\nmax_connections=100\n" {
		t.Errorf("a config without a base shows as its file: %q", r.stdout)
	}
	pg := filepath.Join(dir, "pg.txt")
	os.WriteFile(pg, []byte("work_mem = 64MB\n"), 0o644)
	if r := qpslab(t, h, "configs", "add", "bigsort", pg, "--family", "postgres"); r.code != 0 {
		t.Errorf("configs add --family postgres: %+v", r)
	}
	if r := qpslab(t, h, "configs", "show", "bigsort"); !strings.Contains(r.stdout, "work_mem = 64MB  # from bigsort") || !strings.Contains(r.stdout, "shared_buffers = 2GB") {
		t.Errorf("configs show bigsort (postgres, found without --family): %+v", r)
	}
	if r := qpslab(t, h, "configs", "show", "default", "--family", "postgres"); !strings.Contains(r.stdout, "shared_buffers") {
		t.Errorf("configs show default --family postgres: %+v", r)
	}

	r = qpslab(t, h, "configs", "list")
	for _, want := range []string{`BASE`, `\ndurable +mysql +default `, `\nplain +mysql +- `} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("configs list lacks %q:\n%s", want, r.stdout)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"show a name both families have", []string{"configs", "show", "default"}, []string{`config named "default"`, "--family mysql", "--family postgres"}},
		{"show an unknown config", []string{"configs", "show", "nosuch"}, []string{`no config named "nosuch"`, "qpslab configs list"}},
		{"show with an unknown family", []string{"configs", "show", "default", "--family", "oracle"}, []string{`unknown config family "oracle"`}},
		{"add on a missing base", []string{"configs", "add", "x", f, "--base", "nosuch"}, []string{"based on nosuch", "qpslab configs list"}},
		{"add default on itself", []string{"configs", "add", "default", f}, []string{"cannot be based on itself", "--base none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := qpslab(t, h, tc.args...)
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if r.code == 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "qpslab: ") {
				t.Fatalf("want exit non-zero and one line, got %+v", r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not contain %q", r.stderr, w)
				}
			}
		})
	}
}
