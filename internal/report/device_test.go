package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/host"
)

// db_bench's runs carry the disk's request sizes: the per-op table has
// the compaction readahead and the disk's max_sectors_kb, then rareq-sz
// and wareq-sz, after o/s, absolute and relative; a table whose runs have
// none (sysbench's) keeps the seed's columns.
func TestMetricsDeviceColumns(t *testing.T) {
	row := func(label string, dev []float64) analysis.MetricRow {
		return analysis.MetricRow{Label: label, N: 1, Op: "op", Abs: []float64{0.001, 0.5, 0.1, 0.4, 2, 10000}, Honest: []float64{20, 10, 1}, Device: dev}
	}
	tables := []analysis.MetricTable{
		{Test: "overwriteandwait.iobound", Threads: 1, Rows: []analysis.MetricRow{row("rx.default", []float64{96, 128, 84.5, 120}), row("rx.cra2m", []float64{2048, 128, 4.6, 118})}},
		{Test: "point-query", Threads: 1, Rows: []analysis.MetricRow{row("my.default", nil)}},
	}
	var b bytes.Buffer
	if err := Metrics(&b, tables, "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	db, sb, _ := strings.Cut(out, "point-query")
	for _, want := range []string{"o/s", "readahead_kb  max_sectors_kb  rareq-sz  wareq-sz", "84.5", "4.6", "0.05", "2048", "rx.cra2m"} {
		if !strings.Contains(db, want) {
			t.Errorf("the db_bench table lacks %q:\n%s", want, db)
		}
	}
	if strings.Contains(sb, "rareq-sz") {
		t.Errorf("a table without request sizes shows them:\n%s", sb)
	}
	b.Reset()
	if err := Metrics(&b, tables, "csv"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.HasSuffix(lines[0], "readahead_kb,max_sectors_kb,rareq-sz,wareq-sz") || !strings.HasSuffix(lines[2], ",2048,128,4.6,118") || !strings.HasSuffix(lines[3], ",NaN,NaN,NaN,NaN") {
		t.Errorf("csv:\n%s", b.String())
	}
}

// host check's storage lines: the device, each member under its array,
// and why when there is none.
func TestStorageLines(t *testing.T) {
	yes, no := true, false
	s := &host.Storage{Path: "/data", Device: &host.BlockDevice{Name: "md0", MaxSectorsKB: 512, MaxHWSectorsKB: 32767, Scheduler: "none", Rotational: &yes, ReadAheadKB: 4096},
		Members: []host.BlockDevice{{Name: "sdb", Partition: "sdb2", Under: "md0", MaxSectorsKB: 64, MaxHWSectorsKB: 512, Scheduler: "mq-deadline", Rotational: &no, ReadAheadKB: 128}}}
	got := strings.Join(StorageLines(s), "\n")
	want := "storage of /data: md0: max_sectors_kb 512, max_hw_sectors_kb 32767, scheduler none, rotational, read_ahead_kb 4096\n" +
		"  under md0: sdb2 on sdb: max_sectors_kb 64, max_hw_sectors_kb 512, scheduler mq-deadline, not rotational, read_ahead_kb 128"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if l := StorageLines(&host.Storage{Path: "/dev/shm", Err: "/dev/shm is on tmpfs, which has no block device"}); len(l) != 1 || !strings.Contains(l[0], "unknown (/dev/shm is on tmpfs") {
		t.Errorf("no device: %q", l)
	}
	if StorageLines(nil) != nil {
		t.Error("lines without a look at the storage")
	}
}
