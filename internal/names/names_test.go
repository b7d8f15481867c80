package names_test

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/names"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/testenv"
	_ "github.com/qpslab/qpslab/internal/workload" // the suites a run names
)

func TestNames(t *testing.T) {
	long := strings.Repeat("a", names.Max)
	for _, c := range []struct {
		name, what, v string
		want          []string // nil: valid
	}{
		{"a seed's build", "build", "ma100244_rel_withdbg", nil},
		{"a fetched build", "build", "percona-server-8.0.36-28", nil},
		{"a build of the longest", "build", long, nil},
		{"a build one too long", "build", long + "b", []string{"is 101 characters long", "at most 100"}},
		{"a build with a space", "build", "a b", []string{`"a b" is not valid`, "letters, digits and _ . + -"}},
		{"a build with '@'", "build", "a@b", []string{"is not valid"}},
		{"a build like a flag", "build", "-x", []string{"is not valid"}},
		{"a build like a path", "build", "../x", []string{"is not valid"}},
		{"an empty build", "build", "", []string{`"" is not valid`}},
		{"a config", "config", "cz11a_bee", nil},
		{"a config of the longest", "config", long, nil},
		{"a config one too long", "config", long + "c", []string{"config name", "is 101 characters long"}},
		{"a config with a dot", "config", "a.b", []string{`"a.b" is not valid`, "letters, digits, _ and -"}},
		{"a config with '+'", "config", "a+b", []string{"is not valid"}},
		{"a config with control characters", "config", "a\x1b[2J", []string{"is not valid"}},
		{"a sandbox", "sandbox", "ma100244_rel.cz11a_bee-rocksdb", nil},
		{"a sandbox too long", "sandbox", strings.Repeat("s", 256), []string{"at most 255"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			check := map[string]func(string) error{"build": names.Build, "config": names.Config, "sandbox": names.Sandbox}[c.what]
			err := check(c.v)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			testenv.WantErr(t, err, c.want...)
		})
	}
}

func TestOnce(t *testing.T) {
	if err := names.Once("--config", []string{"c1", "c2"}); err != nil {
		t.Fatal(err)
	}
	testenv.WantErr(t, names.Once("--config", []string{"c1", "c2", "c1"}), "--config names c1 twice")
}

// What is made of names fits every later limit: a stored config
// (NAME@HASH) what an import takes as a name, and a sandbox's folder
// (BUILD.CONFIG-ENGINE, with the longest engine name qpslab knows of)
// one file name.
func TestWhatIsMadeOfNamesFits(t *testing.T) {
	long := strings.Repeat("c", names.Max)
	id := config.Config{Name: long, Content: []byte("x")}.ID()
	if len(id) > importer.MaxName {
		t.Errorf("a config of the longest name is stored as %d bytes (%s…), over the import's %d", len(id), id[:20], importer.MaxName)
	}
	// A run of the longest build and config names is one import takes.
	r := result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: "point-query_range=100", Build: strings.Repeat("b", names.Max),
		Config: id, Threads: 1, Loop: "closed", Status: result.OK, Role: result.RoleTest}
	if err := importer.Validate([]result.Run{r}); err != nil {
		t.Errorf("import refuses a run of the longest names: %v", err)
	}
	sb := strings.Repeat("b", names.Max) + "." + long + "-rocksdb"
	if err := names.Sandbox(sb); err != nil {
		t.Errorf("the sandbox of the longest build and config names: %v", err)
	}
}
