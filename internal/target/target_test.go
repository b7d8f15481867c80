package target_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/target"
	"github.com/qpslab/qpslab/internal/testenv"
)

// Every bad registration is one line naming the problem, and nothing is
// registered; a good one keeps where the password is read from, never
// the password.
func TestNewRefusesAndKeepsNoPassword(t *testing.T) {
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte("s3cret-in-file\nsecond line\n"), 0o600)
	long := strings.Repeat("x", 300)
	for _, c := range []struct {
		name string
		s    target.Spec
		want []string
	}{
		{"no flavor", target.Spec{Name: "a", Host: "h"}, []string{"--flavor"}},
		{"not a server", target.Spec{Name: "a", Flavor: "rocksdb", Host: "h"}, []string{"--flavor", "mariadb, mysql or postgres"}},
		{"no place", target.Spec{Name: "a", Flavor: "mariadb"}, []string{"one of --dsn, --host"}},
		{"two places", target.Spec{Name: "a", Flavor: "mariadb", Host: "h", Socket: "/s"}, []string{"one of --dsn, --host"}},
		{"dotted name", target.Spec{Name: "a.b", Flavor: "mariadb", Host: "h"}, []string{"not valid"}},
		{"long name", target.Spec{Name: long, Flavor: "mariadb", Host: "h"}, []string{"characters long"}},
		{"control name", target.Spec{Name: "a\x1b[2J", Flavor: "mariadb", Host: "h"}, []string{"not valid"}},
		{"control host", target.Spec{Name: "a", Flavor: "mariadb", Host: "h\x00x"}, []string{"control character"}},
		{"long host", target.Spec{Name: "a", Flavor: "mariadb", Host: long}, []string{"--host", "characters long"}},
		{"port", target.Spec{Name: "a", Flavor: "mariadb", Host: "h", Port: 70000, PortSet: true}, []string{"--port 70000"}},
		{"negative port", target.Spec{Name: "a", Flavor: "mariadb", Host: "h", Port: -1, PortSet: true}, []string{"--port -1"}},
		{"relative socket", target.Spec{Name: "a", Flavor: "mariadb", Socket: "run/s.sock"}, []string{"absolute"}},
		{"postgres socket folder", target.Spec{Name: "a", Flavor: "postgres", Socket: "/var/run/postgresql"}, []string{".s.PGSQL.5432"}},
		{"port with socket", target.Spec{Name: "a", Flavor: "mariadb", Socket: "/s", Port: 1, PortSet: true}, []string{"--port goes with --host"}},
		{"quoted user", target.Spec{Name: "a", Flavor: "mariadb", Host: "h", User: "x' OR 1"}, []string{"--user"}},
		{"database", target.Spec{Name: "a", Flavor: "mariadb", Host: "h", Database: "x`; DROP DATABASE y"}, []string{"--database"}},
		{"password as env", target.Spec{Name: "a", Flavor: "mariadb", Host: "h", PasswordEnv: "hunter 2!"}, []string{"--password-env", "not the password"}},
		{"both", target.Spec{Name: "a", Flavor: "mariadb", Host: "h", PasswordEnv: "X", PasswordFile: pwFile}, []string{"exclude each other"}},
		{"no file", target.Spec{Name: "a", Flavor: "mariadb", Host: "h", PasswordFile: "/nonexistent/pw"}, []string{"cannot be read"}},
		{"dsn password", target.Spec{Name: "a", Flavor: "mariadb", DSN: "mysql://u:hunter2@h/db"}, []string{"holds a password"}},
		{"dsn parameters", target.Spec{Name: "a", Flavor: "postgres", DSN: "postgres://u@h/db?sslmode=require&password=x"}, []string{"parameters (password, sslmode)"}},
		{"dsn scheme", target.Spec{Name: "a", Flavor: "postgres", DSN: "mysql://u@h/db"}, []string{"postgres://"}},
		{"dsn and port", target.Spec{Name: "a", Flavor: "mariadb", DSN: "mysql://u@h/db", Port: 1, PortSet: true}, []string{"leave out --port"}},
		{"dsn control", target.Spec{Name: "a", Flavor: "mariadb", DSN: "mysql://u@h/db\n"}, []string{"control character"}},
		{"dsn huge", target.Spec{Name: "a", Flavor: "mariadb", DSN: "mysql://u@h/" + long + long}, []string{"characters long"}},
	} {
		_, err := target.New(c.s)
		testenv.WantErr(t, err, c.want...)
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error repeats the password: %v", c.name, err)
		}
	}

	h := home.Home{Root: t.TempDir()}
	tg, err := target.New(target.Spec{Name: "pg", Flavor: "postgres", DSN: "postgres://bench@db.example:6432/bench", PasswordFile: pwFile})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Host != "db.example" || tg.Port != 6432 || tg.User != "bench" || tg.Database != "bench" {
		t.Errorf("from the DSN: %+v", tg)
	}
	if err := target.Add(h, tg, false); err != nil {
		t.Fatal(err)
	}
	testenv.WantErr(t, target.Add(h, tg, false), "registered already", "--replace")
	got, err := target.Get(h, "pg")
	if err != nil {
		t.Fatal(err)
	}
	ep, err := got.Endpoint()
	if err != nil || ep.Password != "s3cret-in-file" {
		t.Errorf("the password read from the file: %q %v", ep.Password, err)
	}
	if s := ep.String() + " " + ep.GoString(); strings.Contains(s, "s3cret") {
		t.Errorf("the endpoint prints its password: %s", s)
	}
	b, _ := os.ReadFile(filepath.Join(h.Root, "targets", "pg.yaml"))
	if strings.Contains(string(b), "s3cret") || !strings.Contains(string(b), pwFile) {
		t.Errorf("the stored target:\n%s", b)
	}
	if fi, err := os.Stat(filepath.Join(h.Root, "targets", "pg.yaml")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the stored target's mode: %v %v", fi.Mode(), err)
	}
	env, err := target.New(target.Spec{Name: "my", Flavor: "mariadb", Host: "10.0.0.9", PasswordEnv: "QPSLAB_TEST_UNSET_PW"})
	if err != nil || env.Port != 3306 || env.User != "root" || env.Database != target.DefaultDatabase {
		t.Fatalf("defaults: %+v %v", env, err)
	}
	os.Unsetenv("QPSLAB_TEST_UNSET_PW")
	_, err = env.Endpoint()
	testenv.WantErr(t, err, "$QPSLAB_TEST_UNSET_PW", "not set")
	target.Add(h, env, false)
	ts, err := target.List(h)
	if err != nil || len(ts) != 2 {
		t.Fatalf("list: %v %v", ts, err)
	}
	if _, err := target.Remove(h, "my"); err != nil {
		t.Fatal(err)
	}
	_, err = target.Get(h, "my")
	testenv.WantErr(t, err, "no target named my")
	_, err = target.Get(h, "../../etc/passwd")
	testenv.WantErr(t, err, "not valid")
}
