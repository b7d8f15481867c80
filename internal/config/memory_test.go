package config

import (
	"strings"
	"testing"
)

func TestMemory(t *testing.T) {
	for _, c := range []struct {
		fam     Family
		content string
		want    int64
		what    string
	}{
		{MySQL, "", 128 << 20, "default"},
		{MySQL, "[mysqld]\ninnodb_buffer_pool_size=2G\n", 2 << 30, "innodb_buffer_pool_size=2G"},
		{MySQL, "innodb-buffer-pool-size=512M\n[client]\ninnodb_buffer_pool_size=8G\n", 512 << 20, "=512M"},
		{MySQL, "[mariadb]\nloose-innodb_buffer_pool_size=1073741824\nloose-rocksdb_block_cache_size=1G\n", 2 << 30, "rocksdb_block_cache_size=1G"},
		{Postgres, "", 128 << 20, "default"},
		{Postgres, "shared_buffers = 2GB\n", 2 << 30, "shared_buffers=2GB"},
		{Postgres, "shared_buffers = 16384\n", 128 << 20, "16384"},
		{Postgres, "SHARED_BUFFERS = '256MB'\n", 256 << 20, "256MB"},
		{RocksDB, "--cache_size=1G\n", 0, ""},
	} {
		got, what, err := Memory(Config{Name: "x", Family: c.fam, Content: []byte(c.content)})
		if err != nil || got != c.want || !strings.Contains(what, c.what) {
			t.Errorf("%s %q: %d %q %v, want %d %q", c.fam, c.content, got, what, err, c.want, c.what)
		}
	}
	for _, bad := range []struct {
		fam     Family
		content string
	}{
		{MySQL, "innodb_buffer_pool_size=lots\n"},
		{MySQL, "innodb_buffer_pool_size=99999999999999999G\n"},
		{Postgres, "shared_buffers = 2XB\n"},
	} {
		_, _, err := Memory(Config{Name: "x", Family: bad.fam, Content: []byte(bad.content)})
		if err == nil || !strings.Contains(err.Error(), "config x") {
			t.Errorf("%q: %v, want an error naming the config", bad.content, err)
		}
	}
}
