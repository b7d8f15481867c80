package report

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// A run whose load came from two client hosts prints each host's share,
// the one whose client CPU was not measured saying so rather than 0.
func TestPartLine(t *testing.T) {
	r := result.Run{Status: result.OK, Totals: result.Totals{ReportedUnit: "qps"}}
	got := PartLine(r, result.Part{Host: "load-a", Threads: 32, Events: 120000, Reported: 12000, P99: 2500,
		ClientCPUUsOp: 41.5, ClientCPU: 97, Status: result.OK})
	want := "    part load-a: 32 threads, 120000 events, 12000.0 qps, p99 2.500 ms, client_cpu_us/o 41.5, client CPU 97% of one"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	got = PartLine(r, result.Part{Host: "load-b", Threads: 32, NoClientCPU: true, Status: result.Failed, Error: "lost its connection"})
	if !strings.Contains(got, "client CPU not measured") || !strings.HasSuffix(got, "failed: lost its connection") {
		t.Errorf("got %q", got)
	}
}
