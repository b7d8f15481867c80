package owned_test

import (
	"context"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/owned"
	"github.com/qpslab/qpslab/internal/testenv"
)

func TestParseEngine(t *testing.T) {
	for in, want := range map[string]string{"InnoDB": "innodb", " rocksdb ": "rocksdb", "MyRocks": "rocksdb", "tokudb": "tokudb", "my_engine2": "my_engine2"} {
		if got, err := owned.ParseStorageEngine(in); err != nil || got != want {
			t.Errorf("ParseEngine(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "2fast", "inno db", "rocksdb;drop", "x'y"} {
		_, err := owned.ParseStorageEngine(bad)
		testenv.WantErr(t, err, "is not an engine's name")
	}
}

// On MariaDB 10.11 with the default config InnoDB is there and MyRocks is
// not (a line that says which config loads it); with myrocks both are, and
// a table's engine is checked against the one asked for.
func TestCheckEngineOnServer(t *testing.T) {
	ctx := context.Background()
	dial := func(t *testing.T, config string) client.Conn {
		srv, _ := testenv.StartServerWith(t, "mariadb-system", config)
		c, err := client.Dial(ctx, srv.Endpoint(), client.Options{Transport: client.Blocking})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	t.Run("default", func(t *testing.T) {
		c := dial(t, "default")
		if err := owned.CheckStorageEngine(ctx, c, "innodb"); err != nil {
			t.Error(err)
		}
		testenv.WantErr(t, owned.CheckStorageEngine(ctx, c, "rocksdb"), "the server has no storage engine rocksdb", "--config myrocks", "mariadb-plugin-rocksdb")
		testenv.WantErr(t, owned.CheckStorageEngine(ctx, c, "nosuch"), "no storage engine nosuch", "SHOW ENGINES")
	})
	t.Run("myrocks", func(t *testing.T) {
		c := dial(t, "myrocks")
		for _, e := range []string{"innodb", "rocksdb"} {
			if err := owned.CheckStorageEngine(ctx, c, e); err != nil {
				t.Error(err)
			}
		}
		if err := owned.Create(ctx, client.MySQLDialect, c, []owned.Table{{Name: "engine_t", DDL: "CREATE TABLE engine_t (id INT PRIMARY KEY)" + client.MySQLDialect.TableOptions("rocksdb")}}); err != nil {
			t.Fatal(err)
		}
		if err := owned.VerifyStorageEngine(ctx, client.MySQLDialect, c, []string{"engine_t"}, "rocksdb"); err != nil {
			t.Error(err)
		}
		testenv.WantErr(t, owned.VerifyStorageEngine(ctx, client.MySQLDialect, c, []string{"engine_t"}, "innodb"),
			"table engine_t is not in storage engine innodb", "--engine innodb", "--no-load")
	})
}
