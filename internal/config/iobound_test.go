package config

import (
	"strings"
	"testing"
)

// The iobound overlay: laid over the config's settings at its end (so it
// wins), the name kept, the cache at least MinCache in whole MB in one
// InnoDB chunk, the config's own direct IO kept, buffered IO replaced;
// PostgreSQL's direct IO only where the server has it (16 and later).
func TestIOBoundOverlay(t *testing.T) {
	since16 := func(string) bool { return true }   // a server of 16 or later
	before16 := func(string) bool { return false } // an older one
	for _, c := range []struct {
		fam           Family
		content       string
		bytes         int64
		atLeast       func(string) bool
		want, wantNot []string
	}{
		{MySQL, "[mysqld]\ninnodb_buffer_pool_size=6G\ninnodb_flush_method=fsync\n", 100<<20 + 5, since16,
			[]string{"innodb_buffer_pool_size=100M", "loose-innodb_buffer_pool_chunk_size=100M", "loose-innodb_flush_method=O_DIRECT"}, nil},
		{MySQL, "[mysqld]\ninnodb_flush_method = O_DIRECT_NO_FSYNC\n", 1 << 20, since16,
			[]string{"innodb_buffer_pool_size=8M"}, []string{"loose-innodb_flush_method"}},
		{Postgres, "shared_buffers = 2GB\n", 64 << 20, since16, []string{"shared_buffers = 64MB", "debug_io_direct = data"}, nil},
		{Postgres, "shared_buffers = 2GB", 64 << 20, before16, []string{"\nshared_buffers = 64MB"}, []string{"debug_io_direct"}},
	} {
		in := Config{Name: "x", Family: c.fam, Content: []byte(c.content)}
		out, set, err := IOBound(in, c.bytes, c.atLeast)
		if err != nil {
			t.Fatal(err)
		}
		got := string(out.Content)
		if out.Name != "x" || !strings.HasPrefix(got, c.content) || out.ID() == in.ID() {
			t.Errorf("%s: not x's content with the overlay after it:\n%s", c.content, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: lacks %q:\n%s", c.content, w, got)
			}
		}
		for _, w := range c.wantNot {
			if strings.Contains(got, w) || strings.Contains(set, w) {
				t.Errorf("%q: has %q:\n%s", c.content, w, got)
			}
		}
		n, _, err := Memory(out)
		if err != nil || n != max(c.bytes, MinCache)>>20<<20 {
			t.Errorf("%q: Memory says %d (%v): the overlay's cache does not win", c.content, n, err)
		}
	}
	if _, _, err := IOBound(Config{Name: "o", Family: RocksDB, Content: []byte("--cache_size=1\n")}, 1<<30, since16); err == nil || !strings.Contains(err.Error(), "db_bench sizes its block cache itself") {
		t.Errorf("a db_bench option set: %v", err)
	}
}
