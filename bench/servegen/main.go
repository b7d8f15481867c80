// Command servegen writes qpslab results files (the results JSON that
// POST /api/v1/results and qpslab import take) of synthetic sysbench runs,
// for bench/serve-pages.sh: a dashboard's store at the size a team reaches.
//
//	servegen -shape wide -out DIR     BUILDS builds × CONFIGS configs × the
//	                                  42 report tests at 1 thread (default
//	                                  38 × 12 × 44 labels' runs: 20,064 runs,
//	                                  456 labels), in files of -per runs
//	servegen -shape configs -out DIR  one test (point-query_range=100) over
//	                                  BUILDS builds × CONFIGS configs (default
//	                                  30 × 100: 3,000 runs)
//	servegen -shape tail -out DIR     -per runs of one new build, for the
//	                                  small posts that arrive while pages
//	                                  are read (-seq numbers the build)
//
// Each build names a version (10.11.N) and a commit; QPS is a test's base
// (1,000 × its place) with ±2 % noise from a fixed seed, and the builds from
// the middle on are 15 % slower on the point tests, so detect finds change
// points and the attention view has entries. Written by hand: the runs
// must pass the importer's checks (sysbench.Stamp), which no generic
// generator knows.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

func main() {
	shape := flag.String("shape", "wide", "wide, configs or tail")
	out := flag.String("out", "", "folder to write the files to")
	builds := flag.Int("builds", 0, "builds (default 38 wide, 30 configs)")
	configs := flag.Int("configs", 0, "configs (default 12 wide, 100 configs)")
	per := flag.Int("per", 5000, "runs per file (tail: runs in all)")
	seq := flag.Int("seq", 0, "tail: the build's number")
	flag.Parse()
	if *out == "" {
		fail("-out DIR is needed")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err.Error())
	}
	tests := sysbench.Report2024()
	rng := rand.New(rand.NewPCG(1, uint64(*seq)))
	var runs []result.Run
	switch *shape {
	case "wide":
		nb, nc := or(*builds, 38), or(*configs, 12)
		for b := range nb {
			for c := range nc {
				for i, t := range tests {
					runs = append(runs, run(rng, t, i, b, nb, fmt.Sprintf("c%03d", c)))
				}
			}
		}
	case "configs":
		nb, nc := or(*builds, 30), or(*configs, 100)
		t, err := sysbench.Lookup("point-query_range=100")
		if err != nil {
			fail(err.Error())
		}
		for b := range nb {
			for c := range nc {
				runs = append(runs, run(rng, t, 0, b, nb, fmt.Sprintf("my%03d", c)))
			}
		}
	case "tail":
		for i := range *per {
			runs = append(runs, run(rng, tests[i%len(tests)], i%len(tests), 1000+*seq, 2000, fmt.Sprintf("c%03d", i/len(tests))))
		}
	default:
		fail("-shape " + *shape + ": use wide, configs or tail")
	}
	for i := 0; i < len(runs); i += *per {
		f := result.File{SchemaVersion: result.SchemaVersion, Runs: runs[i:min(i+*per, len(runs))]}
		b, err := json.Marshal(f)
		if err != nil {
			fail(err.Error())
		}
		name := filepath.Join(*out, fmt.Sprintf("%s-%04d-%05d.json", *shape, *seq, i / *per))
		if err := os.WriteFile(name, b, 0o644); err != nil {
			fail(err.Error())
		}
	}
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// run is test t (the i-th) of build b of nb on config cfg.
func run(rng *rand.Rand, t sysbench.Test, i, b, nb int, cfg string) result.Run {
	v := fmt.Sprintf("10.11.%d", b+1)
	q := 1000 * float64(1+i%7) * (1 + 0.02*rng.NormFloat64())
	if b >= nb/2 && strings.HasPrefix(t.Name, "point") {
		q *= 0.85
	}
	started := t0.Add(time.Duration(b)*24*time.Hour + time.Duration(i)*time.Minute)
	r := result.Run{SchemaVersion: result.SchemaVersion, Test: t.Label(), Build: "ma" + v, Flavor: "mariadb", Version: v,
		Config: cfg + "@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Started: started, Ended: started.Add(10 * time.Second),
		Params: map[string]string{"commit": fmt.Sprintf("%08x", 0xc0ffee00+b)},
		Totals: result.Totals{Seconds: 10, Events: int64(q * 10), Statements: int64(q * 10), Reported: q, ReportedUnit: "qps", QPS: q,
			Series: result.SeriesStatements, Response: result.Latency{Count: int64(q * 10), P99: 1e6 / q}}}
	for s := range 10 {
		r.Samples = append(r.Samples, result.Sample{Second: s, Events: int64(q), Statements: int64(q), Response: result.Latency{P99: 1e6 / q}})
	}
	if err := sysbench.Stamp(&r); err != nil {
		fail(err.Error())
	}
	return r
}

func or(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "servegen: "+msg)
	os.Exit(1)
}
