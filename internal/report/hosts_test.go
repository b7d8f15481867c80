package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
)

// The datadirs' disk's max_sectors_kb is on compare's host line, and under
// a comparison of db_bench runs (whose disk request sizes were measured)
// even when no label names its host; other runs get no storage line.
func TestHostsStorage(t *testing.T) {
	fp, _ := json.Marshal(host.Check{CPUModel: "Xeon", CPUs: 2, MemKB: 24_700_000, Kernel: "6.1", Driver: "none",
		Storage: &host.Storage{Path: "/data", Device: &host.BlockDevice{Name: "md0", MaxSectorsKB: 512, ReadAheadKB: 4096},
			Members: []host.BlockDevice{{Name: "nvme0n1", Under: "md0", MaxSectorsKB: 128, ReadAheadKB: 128}}}})
	if got := fingerprintLine(fp); !strings.Contains(got, "datadir disk nvme0n1 max_sectors_kb 128, read_ahead_kb 128") {
		t.Errorf("host line %q", got)
	}
	run := func(dbBench bool) result.Run {
		r := result.Run{Status: result.OK, Host: fp, HW: &result.HW{Samples: 3, Seconds: 2, OpsPerSec: 100, Avg: result.HWSecond{RareqSz: 4.6}},
			Totals: result.Totals{Figures: map[string]float64{}}}
		if dbBench {
			r.Totals.Figures["usec_op"] = 10
		}
		return r
	}
	id := func(json.RawMessage) (string, error) { return "h1", nil }
	text := func(bs []Block) string {
		var b strings.Builder
		Doc{Blocks: bs}.Write(&b, "text", false)
		return b.String()
	}
	db := []analysis.Set{{Label: "rx783.default", Runs: []result.Run{run(true)}}, {Label: "rx783.cra8m", Runs: []result.Run{run(true)}}}
	if got := text(hostBlocks(db, id)); strings.Count(got, "Storage: datadir disk nvme0n1 max_sectors_kb 128, read_ahead_kb 128, on a host of 24.7 GB of memory (rx783.default)") != 1 {
		t.Errorf("db_bench's comparison:\n%s", got)
	}
	sb := []analysis.Set{{Label: "my.default", Runs: []result.Run{run(false)}}}
	if got := text(hostBlocks(sb, id)); got != "" {
		t.Errorf("a sysbench comparison got %q", got)
	}
	named := []analysis.Set{{Label: "rx783.default@h1", Runs: []result.Run{run(true)}}}
	if got := text(hostBlocks(named, id)); !strings.Contains(got, "host h1: Xeon, 2 CPUs") || !strings.Contains(got, "max_sectors_kb 128") {
		t.Errorf("hosts block:\n%s", got)
	}
}
