package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A db_bench option set reads as gflags reads a flagfile: --name=value,
// -name=value, name=value, --name (a switch); # starts a comment line, but
// a # after a value is part of it.
func TestParseFlagLines(t *testing.T) {
	f, err := parse(RocksDB, []byte("# a comment\n\n--compaction_readahead_size=96K\n-use_direct_reads=true\nbytes_per_sync = 0\n  --statistics\n--compaction-style=1\n--block_size=8192 # not a comment\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range f.lines {
		if l.kind == settingLine {
			got = append(got, l.key+"|"+l.value)
		}
	}
	want := "compaction_readahead_size|96K use_direct_reads|true bytes_per_sync|0 statistics| compaction_style|1 block_size|8192 # not a comment"
	if strings.Join(got, " ") != want {
		t.Errorf("settings %q, want %q", strings.Join(got, " "), want)
	}
	for _, bad := range []struct{ text, want string }{
		{"compaction_readahead_size\n", "is no flag: write --name=value"},
		{"--=3\n", "has no flag name"},
		{"--a b=3\n", "has no flag name"},
		{"ok=1\n-\n", "line 2"},
	} {
		_, err := parse(RocksDB, []byte(bad.text), "x")
		wantErr(t, err, bad.want)
	}
}

// Layered over a base, an option set's flags replace the base's flags of
// the same name (dash or underscore alike) in place, new ones follow; marks
// never go at a line's end, where db_bench would read them as the value.
func TestOverlayFlags(t *testing.T) {
	got := layer(t, RocksDB, "--cache_size=1000\n--compression_type=lz4\n", "--cache-size=2000\n--use_direct_reads\n")
	want := "# from v:\n--cache-size=2000\n--compression_type=lz4\n# from v:\n--use_direct_reads\n"
	if got != want {
		t.Errorf("layered:\n%s\nwant:\n%s", got, want)
	}
}

// Options are the effective flags, one per name, the last line winning.
func TestOptions(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	write := func(name, text string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c, err := s.AddWith("cra96k", write("cra96k.flags", "--compaction_readahead_size=96K\n--statistics\n--compaction_readahead_size=192K\n"), AddOptions{Base: "odirect"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Family != RocksDB || strings.Join(c.Chain, " ") != "cra96k odirect default" {
		t.Errorf("added %s %s over %v", c.Name, c.Family, c.Chain)
	}
	opts, err := Options(c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range opts {
		got = append(got, o.Flag())
	}
	want := "--use_direct_reads=true --use_direct_io_for_flush_and_compaction=true --bytes_per_sync=0 --compaction_readahead_size=192K --statistics"
	if strings.Join(got, " ") != want {
		t.Errorf("Options = %q, want %q", strings.Join(got, " "), want)
	}
	if got, err := s.Get("cra96k", RocksDB); err != nil || got.ID() != c.ID() {
		t.Errorf("Get = %s, %v; want %s", got.ID(), err, c.ID())
	}
	odirect, err := s.Get("odirect", RocksDB)
	if err != nil || odirect.Source != "shipped" {
		t.Fatalf("the shipped odirect: %+v, %v", odirect, err)
	}
	if _, err := Options(Config{Name: "default", Family: MySQL}); err == nil {
		t.Error("a my.cnf fragment read as an option set")
	}
	_, err = s.AddWith("bad", write("bad.flags", "--a=1\nnot a flag\n"), AddOptions{})
	wantErr(t, err, "config bad", "line 2", "--name=value")
	_, err = s.AddWith("what", write("what.txt", "--a=1\n"), AddOptions{})
	wantErr(t, err, ".flags (a db_bench option set)")
}
