package dbbench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/testenv"
)

func help(t *testing.T) *Help {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "db_bench-7.8.3-help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHelp(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// db_bench --help (recorded from Debian's 7.8.3): every flag with its type
// and default, the help text wrapped over lines; the benchmark list names
// the meta operations this version has.
func TestParseHelp(t *testing.T) {
	h := help(t)
	if len(h.Flags) != 430 {
		t.Errorf("%d flags, want the 430 of 7.8.3", len(h.Flags))
	}
	for name, want := range map[string]Flag{
		"compaction_readahead_size": {"int32", "0"}, "use_direct_reads": {"bool", "false"}, "num": {"int64", "1000000"},
		"compression_type": {"string", "snappy"}, "compression_ratio": {"double", "0.5"}, "bytes_per_sync": {"uint64", "0"},
		"report_file": {"string", "report.csv"}, "merge_operator": {"string", ""},
	} {
		if got := h.Flags[name]; got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if !h.Knows("waitforcompaction") || !h.Knows("compact0") || h.Knows("nosuchbenchmark") {
		t.Error("the benchmark list is not read")
	}
	if _, err := ParseHelp("db_bench: command not found\n"); err == nil {
		t.Error("a help without flags was taken")
	}
}

func rocksConfig(name, text string) config.Config {
	return config.Config{Name: name, Family: config.RocksDB, Content: []byte(text)}
}

// An option set is checked against the db_bench's flags before anything
// runs: names it does not know, the suite's own flags, and values not of
// the flag's type are refused, each naming the config, the line and the
// fix; sizes in K, M, G become numbers, switches true or false.
func TestCheckOptions(t *testing.T) {
	h := help(t)
	got, err := checkOptions(rocksConfig("cra96k", "# comment\n--compaction_readahead_size=96K\nuse_direct_reads=yes\n--use_direct_io_for_flush_and_compaction\n--cache-size=1G\n--nouse_fsync\n--compression_type=zstd\n--compression_ratio=0.25\n"), h, "rocksdb-system")
	want := "--compaction_readahead_size=98304 --use_direct_reads=true --use_direct_io_for_flush_and_compaction=true --cache_size=1073741824 --nouse_fsync --compression_type=zstd --compression_ratio=0.25"
	if err != nil || strings.Join(got, " ") != want {
		t.Errorf("checkOptions = %q, %v; want %q", strings.Join(got, " "), err, want)
	}
	for _, bad := range []struct{ text, want string }{
		{"--compaction_readahead_size=96K\n--bogus_flag=1\n", "config x: the db_bench of build rocksdb-system has no flag --bogus_flag"},
		{"--num=5\n", "--num is the suite's own (--size sets it)"},
		{"--threads=4\n", "the plan's --threads set it"},
		{"--noflagfile\n", "has no flag --noflagfile"},
		{"--compaction_readahead_size=lots\n", "--compaction_readahead_size=lots: an int32"},
		{"--compaction_readahead_size=4G\n", "an int32: give a whole number from -2147483648 to 2147483647"},
		{"--bytes_per_sync=-1\n", "an uint64"},
		{"--use_direct_reads=maybe\n", "a switch: give true or false"},
		{"--compression_ratio=NaN\n", "a double"},
		{"not a flag\n", "--name=value"},
	} {
		_, err := checkOptions(rocksConfig("x", bad.text), h, "rocksdb-system")
		testenv.WantErr(t, err, bad.want)
	}
	_, err = checkOptions(config.Config{Name: "default", Family: config.MySQL, Content: []byte("[mysqld]\n")}, h, "b")
	testenv.WantErr(t, err, "not a db_bench option set")
	if v := flagSetting([]string{"--compaction_readahead_size=1", "--compaction_readahead_size=2"}, h, "compaction_readahead_size"); v != "2" {
		t.Errorf("the last setting wins: %s", v)
	}
	if v := flagSetting(nil, h, "compaction_readahead_size"); v != "0" {
		t.Errorf("unset, the default: %s", v)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"96K": 98304, "96k": 98304, "2M": 2 << 20, "1G": 1 << 30, "1T": 1 << 40, "64KB": 65536, "12": 12, "-3": -3} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "B", "1.5M", "99999999999T", "12Q"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) took it", in)
		}
	}
}

// The plan's check runs the build's own db_bench --help: Debian's
// rocksdb-tools takes the shipped odirect, and refuses a flag it lacks.
func TestCheckAgainstDebian(t *testing.T) {
	b := build.Build{Name: "rocksdb-system", Flavor: build.RocksDB, Basedir: "/usr"}
	if _, err := b.Layout(); err != nil {
		t.Fatalf("%v (make setup installs rocksdb-tools)", err)
	}
	s := config.Store{Dir: t.TempDir()}
	odirect, err := s.Get("odirect", config.RocksDB)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{}
	ctx := context.Background()
	if err := o.check(ctx, b, odirect); err != nil {
		t.Errorf("odirect: %v", err)
	}
	err = o.check(ctx, b, rocksConfig("future", "--compaction_readahead_size=2M\n--prepopulate_blob_cache_of_tomorrow=1\n"))
	testenv.WantErr(t, err, "config future: the db_bench of build rocksdb-system has no flag --prepopulate_blob_cache_of_tomorrow")
	err = o.check(ctx, b, config.Config{Name: "default", Family: config.MySQL})
	testenv.WantErr(t, err, "mysql config", "rocksdb option set")
}
