package selector

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// fingerprints are a stored VM fingerprint (the project's VM, as its runs
// recorded it) and the same fingerprint as a bare-metal Ryzen with
// acpi-cpufreq would record it in several states: boost on or off, the
// performance or powersave governor.
func fingerprints(t *testing.T) (vm json.RawMessage, ryzen func(boost bool, governor string) json.RawMessage) {
	t.Helper()
	vm, err := os.ReadFile(filepath.Join("..", "store", "testdata", "vm-fingerprint-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	return vm, func(boost bool, governor string) json.RawMessage {
		var c host.Check
		if err := json.Unmarshal(vm, &c); err != nil {
			t.Fatal(err)
		}
		c.VM, c.Hypervisor, c.CPUModel, c.Driver, c.Boost = false, "", "AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", "acpi-cpufreq", &boost
		c.Policies = nil
		for _, cpu := range []string{"cpu0", "cpu1"} {
			c.Policies = append(c.Policies, host.Policy{CPU: cpu, Driver: "acpi-cpufreq", Governor: governor, Governors: []string{"performance", "powersave", "schedutil"}})
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// hostRun is a run of test t of label (build.config) on the host of
// fingerprint fp, paired by plan, repeat and round, at qps with a little
// noise; state is the host state its plan set (host.StateParam).
func hostRun(label string, fp json.RawMessage, plan string, rep int, qps float64, state string) result.Run {
	build, config, _ := strings.Cut(label, ".")
	r := result.Run{SchemaVersion: result.SchemaVersion, Suite: "s", Test: "t", Build: build, Config: config + "@0123456789ab", Threads: 1, Status: result.OK,
		Started: time.Date(2026, 1, 1, 0, rep, 0, 0, time.UTC), Host: fp, Plan: plan, Pairing: result.PairedSlices,
		Params: map[string]string{"repeat": string(rune('0' + rep))}, Totals: result.Totals{Reported: qps, ReportedUnit: "qps", QPS: qps, Seconds: 1}}
	if state != "" {
		r.Params[host.StateParam] = state
	}
	for k := 1; k <= 4; k++ {
		v := qps * (1 + 0.002*float64((k*7+rep*3)%5-2))
		r.Rounds = append(r.Rounds, result.Round{Repeat: rep, Round: k, Seconds: 0.25, Value: v, Started: r.Started.Add(time.Duration(k) * time.Second)})
	}
	return r
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func importOn(t *testing.T, st *store.Store, hostname string, runs ...result.Run) {
	t.Helper()
	if _, err := st.Import(context.Background(), runs, store.Meta{Source: "run", Hostname: hostname}); err != nil {
		t.Fatal(err)
	}
}

// A label whose runs came from one machine with boost on and off is
// refused, naming boost and the fix; --by-host splits it, the hosts
// section saying where the columns' hosts differ; a label measured on one
// host against another's is refused unless both hosts are named or the
// plan switched that very fact per label (qpslab run --boost).
func TestUnlikeHosts(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	vm, ryzen := fingerprints(t)
	on, off, saving := ryzen(true, "performance"), ryzen(false, "performance"), ryzen(true, "powersave")
	idOn, _ := store.HostID(on)
	idOff, _ := store.HostID(off)
	for rep := 1; rep <= 3; rep++ {
		importOn(t, st, "ryzen", hostRun("m.c", on, "p1", rep, 1000, ""), hostRun("n.c", on, "p1", rep, 1100, ""))
		importOn(t, st, "ryzen", hostRun("m.c", off, "p2", rep, 800, ""), hostRun("g.c", saving, "p3", rep, 600, ""))
		importOn(t, st, "vm", hostRun("v.c", vm, "p4", rep, 300, ""))
		importOn(t, st, "ryzen", hostRun("b.on", on, "p5", rep, 1000, "boost=on"), hostRun("b.off", off, "p5", rep, 800, "boost=off"))
		importOn(t, st, "ryzen", hostRun("b.saving", ryzen(false, "powersave"), "p5", rep, 500, "boost=off"))
	}
	var se *Error
	refused := func(sel Selection, labels []string, want ...string) {
		t.Helper()
		_, _, err := sel.Compare(ctx, st, labels, "", nil)
		if !errors.As(err, &se) || se.NotFound {
			t.Fatalf("%v: %v, want a refusal", labels, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q lacks %q", labels, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: more than one line: %q", labels, err)
		}
	}
	// m ran with boost on (plan p1) and off (p2) on one machine.
	refused(Selection{}, []string{"m.c", "n.c"}, "m.c pools runs of 2 hosts that differ in boost (", "on on ryzen/"+idOn, "off on ryzen/"+idOff,
		"never pooled", "--by-host", "or take one host's with m.c@")
	refused(Selection{Host: "ryzen"}, []string{"m.c", "n.c"}, "differ in boost")
	// Split by host: each state its own column, compared with the other.
	cmp, sets, err := Selection{ByHost: true}.Compare(ctx, st, []string{"m.c"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || !strings.HasPrefix(sets[0].Label, "m.c@ryzen/") || len(cmp.Rows) != 1 {
		t.Fatalf("by host: %d sets %v, %d rows", len(sets), labelsOf(sets), len(cmp.Rows))
	}
	// One host's runs: pooled no more.
	if _, _, err := (Selection{}).Compare(ctx, st, []string{"m.c@" + idOn, "n.c"}, "", nil); err != nil {
		t.Errorf("m.c on the boosted host against n.c there: %v", err)
	}
	// Two labels on unlike hosts: refused unless the hosts are named.
	refused(Selection{}, []string{"n.c", "g.c"}, "n.c and g.c ran on hosts that differ in governor (performance on cpu0-1 on ryzen/", "g.c@")
	refused(Selection{}, []string{"n.c", "v.c"}, "differ in boost", "cpufreq driver", "CPU model", "virtualisation")
	if _, _, err := (Selection{}).Compare(ctx, st, []string{"n.c@ryzen", "v.c@vm"}, "", nil); err != nil {
		t.Errorf("two named hosts: %v", err)
	}
	// The metrics and stacks commands, and the API, read through Sets.
	if _, err := (Selection{}).Sets(ctx, st, []string{"m.c"}); err == nil {
		t.Error("Sets pools m.c's two hosts")
	}
	// Boost switched by the plan per label (qpslab run --boost): the
	// question, not a confound; a governor that differs as well is.
	cmp, _, err = Selection{}.Compare(ctx, st, []string{"b.on", "b.off"}, "", nil)
	if err != nil || len(cmp.Rows) != 1 || cmp.Rows[0].Others[0].Verdict.Kind != analysis.KindWorse {
		t.Errorf("b.on against b.off, boost switched per label: %v %+v", err, cmp)
	}
	refused(Selection{}, []string{"b.on", "b.saving"}, "differ in governor")
	if _, err := (Selection{}).Sets(ctx, st, []string{"b.on", "b.saving"}); err == nil || strings.Contains(err.Error(), "boost") {
		t.Errorf("b.on and b.saving: the governor only, not the boost the plan set: %v", err)
	}
}

func labelsOf(sets []analysis.Set) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s.Label)
	}
	return out
}

// Each comparison's noise floor is that of the host its runs came from
// (qpslab run --aa), never another host's: the larger of two hosts' where
// the columns ran on two, and none where one of them was never calibrated.
func TestNoiseFloorOfTheRunsHost(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	vm, ryzen := fingerprints(t)
	on, off := ryzen(true, "performance"), ryzen(false, "performance")
	idOn, _ := store.HostID(on)
	idOff, _ := store.HostID(off)
	idVM, _ := store.HostID(vm)
	for rep := 1; rep <= 3; rep++ {
		importOn(t, st, "ryzen", hostRun("m.c", on, "p1", rep, 1000, ""), hostRun("n.c", on, "p1", rep, 1100, ""))
		importOn(t, st, "ryzen", hostRun("m.c", off, "p2", rep, 800, ""), hostRun("n.c", off, "p2", rep, 900, ""))
		importOn(t, st, "vm", hostRun("m.c", vm, "p3", rep, 300, ""), hostRun("n.c", vm, "p3", rep, 310, ""))
	}
	var floors []store.NoiseFloor
	for id, f := range map[string]float64{idOn: 0.01, idOff: 0.30} {
		floors = append(floors, store.NoiseFloor{HostID: id, Suite: "s", Test: "t", Threads: 1, Conditions: "loop=closed", Metric: store.HeadlineMetric, Floor: f, Rel: 1, Lo: 1, Hi: 1})
	}
	if err := st.SaveNoise(ctx, floors); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		labels     []string
		floor      float64
		calibrated bool
	}{
		{[]string{"m.c@" + idOn, "n.c@" + idOn}, 0.01, true},
		{[]string{"m.c@" + idOff, "n.c@" + idOff}, 0.30, true},
		{[]string{"m.c@" + idVM, "n.c@" + idVM}, analysis.DefaultFloor, false},
		{[]string{"m.c@" + idOn, "m.c@" + idOff}, 0.30, true},
		{[]string{"m.c@" + idOn, "n.c@" + idVM}, analysis.DefaultFloor, false},
	} {
		cmp, _, err := Selection{}.Compare(ctx, st, c.labels, "", nil)
		if err != nil {
			t.Fatalf("%v: %v", c.labels, err)
		}
		v := cmp.Rows[0].Others[0].Verdict
		if v.Floor != c.floor || v.Calibrated != c.calibrated {
			t.Errorf("%v: floor %g (calibrated %v), want %g (%v)", c.labels, v.Floor, v.Calibrated, c.floor, c.calibrated)
		}
	}
	// The base's host names the floor of every column no more: the second
	// column, on the other host, has the larger of the two.
	cmp, _, err := Selection{}.Compare(ctx, st, []string{"m.c@" + idOn, "n.c@" + idOn, "n.c@" + idOff}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cmp.Rows[0].Others[0].Verdict.Floor, cmp.Rows[0].Others[1].Verdict.Floor; a != 0.01 || b != 0.30 {
		t.Errorf("floors %g and %g, want 0.01 (one host) and 0.3 (two)", a, b)
	}
}
