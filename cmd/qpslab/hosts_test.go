package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// A store with runs of one label from one machine with boost on and with
// boost off (a stored fingerprint, as a bare-metal host records it in
// each state): the command line and the API refuse to pool them in the
// same words, each naming its own way to split them (--by-host,
// by-host=1), and split they give the same comparison.
func TestUnlikeHostsCLIAndAPI(t *testing.T) {
	h := newHome(t)
	ctx := context.Background()
	st, err := store.Open(ctx, "", filepath.Join(h.Root, "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	vm, err := os.ReadFile(filepath.Join("..", "..", "internal", "store", "testdata", "vm-fingerprint-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	state := func(boost bool) json.RawMessage {
		var c host.Check
		if err := json.Unmarshal(vm, &c); err != nil {
			t.Fatal(err)
		}
		c.VM, c.Driver, c.Boost = false, "acpi-cpufreq", &boost
		c.Policies = []host.Policy{{CPU: "cpu0", Driver: "acpi-cpufreq", Governor: "performance"}, {CPU: "cpu1", Driver: "acpi-cpufreq", Governor: "performance"}}
		b, _ := json.Marshal(c)
		return b
	}
	for i, boost := range []bool{true, false, true, false} {
		var runs []result.Run
		for _, b := range []string{"m", "n"} {
			qps := map[bool]float64{true: 1000, false: 800}[boost] * map[string]float64{"m": 1, "n": 1.05}[b]
			r := result.Run{SchemaVersion: result.SchemaVersion, Test: "point-query_range=100", Build: b, Flavor: "mariadb", Config: "c@0123456789ab",
				Threads: 1, Loop: "closed", Status: result.OK, Started: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC), Host: state(boost),
				Params: map[string]string{"repeat": fmt.Sprint(i + 1)},
				Totals: result.Totals{Seconds: 2, Events: int64(qps * 2), Statements: int64(qps * 2), Reported: qps, ReportedUnit: "qps", QPS: qps, Series: result.SeriesStatements}}
			r.Samples = []result.Sample{{Second: 0, Events: int64(qps), Statements: int64(qps)}, {Second: 1, Events: int64(qps), Statements: int64(qps)}}
			r.HW = &result.HW{Op: "statement", Seconds: 2, Samples: 2, CPUPerOp: 10 / qps, OpsPerSec: qps, CPUs: 2}
			if err := sysbench.Stamp(&r); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
		if _, err := st.Import(ctx, runs, store.Meta{Source: "run", Hostname: "ryzen"}); err != nil {
			t.Fatal(err)
		}
	}
	api := serveAPI(t, st)
	refusal := "m.c pools runs of 2 hosts that differ in boost ("
	for _, q := range []struct {
		cli []string
		api string
	}{
		{[]string{"compare", "m.c", "n.c", "--format", "json"}, "/api/v1/compare?" + url.Values{"base": {"m.c"}, "other": {"n.c"}}.Encode()},
		{[]string{"metrics", "m.c", "n.c", "--format", "json"}, "/api/v1/metrics?" + url.Values{"label": {"m.c,n.c"}}.Encode()},
	} {
		r := qpslab(t, h, q.cli...)
		msg := strings.TrimPrefix(strings.TrimSpace(r.stderr), "qpslab: ")
		if r.code == 0 || r.stdout != "" || !strings.HasPrefix(msg, refusal) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || !strings.Contains(msg, "--by-host") {
			t.Errorf("qpslab %v: exit %d, stdout %q, stderr %q: want one line of refusal", q.cli, r.code, r.stdout, r.stderr)
		}
		code, body := api(q.api)
		var e struct{ Error string }
		json.Unmarshal([]byte(body), &e)
		if code != 400 || e.Error != strings.ReplaceAll(msg, "--by-host", "by-host=1") {
			t.Errorf("GET %s: %d %s, want 400 with the command's words:\n%s", q.api, code, body, msg)
		}
	}
	// Split by host: the same comparison on both.
	r := qpslab(t, h, "compare", "m.c", "--by-host", "--format", "json")
	code, body := api("/api/v1/compare?" + url.Values{"base": {"m.c"}, "by-host": {"1"}}.Encode())
	if r.code != 0 || code != 200 || r.stdout != body {
		t.Errorf("m.c by host: the CLI's (exit %d %s)\n%s\nthe API's (%d)\n%s", r.code, r.stderr, r.stdout, code, body)
	}
	if !strings.Contains(r.stdout, `"base": "m.c@ryzen/`) {
		t.Errorf("m.c by host: no column per host state:\n%.600s", r.stdout)
	}
	// The text says where the columns' hosts differ.
	if r := qpslab(t, h, "compare", "m.c", "--by-host"); r.code != 0 || !strings.Contains(r.stdout, "col-1's host differs from the base's in boost") {
		t.Errorf("m.c by host, text: exit %d %s\n%s", r.code, r.stderr, r.stdout)
	}
}

// qpslab run --boost on this machine, for real: a VM without cpufreq
// cannot switch boost, and the run refuses in one line saying why before
// anything starts.
func TestRunBoostRefusedOnThisHost(t *testing.T) {
	c, err := host.Inspect(host.Real)
	if err != nil {
		t.Fatal(err)
	}
	if c.Driver != "none" || !c.VM {
		testenv.Skip(t, "this host has a cpufreq driver or is no VM: the refusal of a VM is shown over fixture trees (internal/host)")
	}
	h := newHome(t)
	r := qpslab(t, h, "run", "sysbench", "--build", "mariadb-system", "--boost", "off,on", "--tests", "point-query.pre*", "--rows", "1000")
	msg := strings.TrimSpace(r.stderr)
	if r.code == 0 || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "qpslab: --boost: boost cannot be switched on this host: it is a VM") {
		t.Errorf("run --boost on a VM: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(h.Root, "qpslab.db")); err == nil {
		t.Error("the refused run made a store")
	}
	for _, bad := range []struct{ args, want string }{
		{"--boost turbo", `--boost "turbo": give on, off`},
		{"--boost on --aa", "--boost cannot be given with --aa"},
	} {
		args := append([]string{"run", "sysbench", "--build", "mariadb-system"}, strings.Fields(bad.args)...)
		if r := qpslab(t, h, args...); r.code == 0 || !strings.Contains(r.stderr, bad.want) {
			t.Errorf("qpslab %v: exit %d %s", args, r.code, r.stderr)
		}
	}
}
