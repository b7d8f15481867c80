package plan

import (
	"math"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
	_ "github.com/qpslab/qpslab/internal/workload/sysbench" // the suite whose flags are fuzzed with the plan's
)

// every numeric flag is checked: finite, in range, one clear line; never
// clamped.
func TestParseRefusesBadNumbers(t *testing.T) {
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ flag, value, want string }{
		{"warmup", "-1", "--warmup -1"},
		{"warmup", "inf", "--warmup inf"},
		{"rate", "-5", "--rate -5"},
		{"rate", "inf", "--rate inf"},
		{"rate", "nan", "--rate nan"},
		{"repeat", "0", "--repeat 0"},
		{"threads", "0", "--threads 0"},
		{"threads", "1,x", "--threads 1,x"},
		{"read-secs", "nan", "--read-secs nan"},
		{"read-secs", "1e300", "--read-secs 1e300"},
		{"write-secs", "0", "--write-secs 0"},
		{"insert-secs", "-3", "--insert-secs -3"},
		{"rows", "99999999999999999999", "--rows 99999999999999999999"},
		{"tables", "-1", "--tables -1"},
		{"postwrite-scale", "-1", "--postwrite-scale -1"},
		{"report-interval", "0", "--report-interval 0"},
		{"seed", "-2", "--seed -2"},
		{"max-backlog", "-1", "--max-backlog -1"},
		{"arrivals", "bursty", "--arrivals"},
		{"list", "1999", "--list 1999"},
		{"pmp", "-1", "--pmp -1"},
		{"pmp", "0.01", "--pmp 0.01"},
		{"counters", "blks-hit", "--counters blks-hit"},
		{"counters", "none,all", "--counters none"},
	} {
		v := suite.Defaults(Common, s.Params()).With("build", "b").With(c.flag, c.value)
		if c.flag == "max-backlog" || c.flag == "arrivals" {
			v = v.With("rate", "100")
		}
		_, err := Parse(s, v)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--%s %s: %v, want one line naming %q", c.flag, c.value, err, c.want)
		}
	}
	// --pmp and --perf are conditions of the runs they take stacks in.
	p, err := Parse(s, suite.Defaults(Common, s.Params()).With("build", "b").With("pmp", "1").With("perf", "true").With("counters", "default,Innodb_Pages_Created"))
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{}
	p.stackParams(params)
	if p.PMP.Seconds() != 1 || !p.Perf || params["pmp"] != "1" || params["perf"] != "49" || len(p.Counters.Names) != 1 || p.Counters.Names[0] != "innodb_pages_created" {
		t.Errorf("--pmp 1 --perf --counters default,Innodb_Pages_Created: %v %v %+v, params %v", p.PMP, p.Perf, p.Counters, params)
	}
	// --insert-secs follows --write-secs unless given.
	p, err = Parse(s, suite.Defaults(Common, s.Params()).With("write-secs", "2").With("tests", "insert"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Steps.Steps[len(p.Steps.Steps)-1].Seconds.Seconds(); got != 2 {
		t.Errorf("insert runs %v s with --write-secs 2, want 2", got)
	}
}

// FuzzParse: any flag values either make a plan whose numbers are finite
// and in range, or one error line; never a panic.
func FuzzParse(f *testing.F) {
	for _, seed := range [][5]string{
		{"1", "600", "5", "0", "1"},
		{"1,4,16", "0.5", "0", "100", "3"},
		{"0", "nan", "inf", "-5", "0"},
		{"1,,2", "1e308", "-0", "1e10", "99999999999999999999"},
		{" 2 ", "0x10", "1_0", "NaN", "+1"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4])
	}
	s, err := suite.Get("sysbench")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, threads, readSecs, warmup, rate, repeat string) {
		v := suite.Defaults(Common, s.Params()).With("build", "b").
			With("threads", threads).With("read-secs", readSecs).With("warmup", warmup).With("rate", rate).With("repeat", repeat)
		p, err := Parse(s, v)
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "--") {
				t.Fatalf("error is not one line naming a flag: %q", err)
			}
			return
		}
		if p.Warmup < 0 || p.Rate < 0 || math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0) || p.Design.Repeat < 1 || len(p.Threads) == 0 {
			t.Fatalf("accepted warmup %v rate %v repeat %d threads %v", p.Warmup, p.Rate, p.Design.Repeat, p.Threads)
		}
		for _, n := range p.Threads {
			if n < 1 {
				t.Fatalf("accepted %d threads", n)
			}
		}
		for _, st := range p.Steps.Steps {
			if st.Drive != nil && st.Seconds <= 0 {
				t.Fatalf("accepted a step of %v", st.Seconds)
			}
		}
	})
}

// Builds and configs are names as package names says, each given once,
// and the configs a grid derives are names too: each refused in one line
// before anything runs (before this, --config c1,c1 ran two labels of one
// name in one sandbox, and a grid's names had no bound).
func TestParseRefusesNames(t *testing.T) {
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	longBase := strings.Repeat("c", 90)
	for _, c := range []struct {
		name string
		with [][2]string
		want []string
	}{
		{"a config twice", [][2]string{{"build", "b"}, {"config", "c1,c1"}}, []string{"--config names c1 twice"}},
		{"a build twice", [][2]string{{"build", "b,b"}}, []string{"--build names b twice"}},
		{"a build not a name", [][2]string{{"build", "a b"}}, []string{`--build: build name "a b" is not valid`}},
		{"a config not a name", [][2]string{{"build", "b"}, {"config", "x.y"}}, []string{`--config: config name "x.y" is not valid`}},
		{"a config too long", [][2]string{{"build", "b"}, {"config", strings.Repeat("c", 188)}}, []string{"is 188 characters long", "at most 100"}},
		{"a grid's name too long", [][2]string{{"build", "b"}, {"config", longBase}, {"set", "innodb_io_capacity=2000"}},
			[]string{"the grid point innodb_io_capacity=2000 over config " + longBase, "at most 100", "a shorter name"}},
		{"two grid points of one name", [][2]string{{"build", "b"}, {"set", "innodb_ft_server_stopword_table=a/b,a_b"}},
			[]string{"innodb_ft_server_stopword_table=a/b and innodb_ft_server_stopword_table=a_b", "both make config default-innodb_ft_server_stopword_table-a_b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := suite.Defaults(Common, s.Params())
			for _, w := range c.with {
				v = v.With(w[0], w[1])
			}
			_, err := Parse(s, v)
			testenv.WantErr(t, err, c.want...)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
}
