package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/suite"
)

// SpecVersion is the version of Spec's JSON: a fleet job carries it with
// its spec, and an agent refuses a spec of a version it does not know
// (a newer qpslab wrote it) rather than run it half understood. Add a
// field with a zero value that keeps today's meaning, or raise it.
const SpecVersion = 1

// Spec is what to run and how, as the user asked for it: the builds and
// configs, the suite and its typed parameters, the budget, repeats and
// interleaving. Parse is the one function that builds a Spec (from the
// flags' values), and it is complete then: no caller assigns its fields
// afterwards (internal/arch's TestSpecIsCompleteAfterParse). It holds
// data only (no function, no unexported field), so that it round-trips
// through JSON: a fleet job carries it to its host. What a run decides
// from it there (the builds looked up, the design of --repeat auto on
// that host's measured noise, the layout of its servers in memory) is the
// Runner's.
type Spec struct {
	Version int    `json:"version"` // SpecVersion
	Suite   string `json:"suite"`   // the suite's name (suite.Get)
	// Given are the parameters that were given, as typed (flag name to
	// its text; lists comma-joined), the suite's own and the plan's: the
	// suite's steps are configured from them and the rest's defaults.
	// The seed is always among them, so that the spec reruns the same.
	Given map[string]string `json:"given"`

	Builds           []string        `json:"builds,omitempty"`     // by name; or the targets', or the sandbox's
	Configs          []string        `json:"configs,omitempty"`    // by name: each build with each, in turn
	PerBuild         config.PerBuild `json:"config_for,omitempty"` // --config-for: a config per build instead
	StorageEngines   []string        `json:"engines"`              // storage engines (owned.ParseStorageEngine's names)
	StorageEngineSet bool            `json:"engine_set,omitempty"` // --engine was given
	Sandbox          string          `json:"sandbox,omitempty"`
	Targets          []string        `json:"targets,omitempty"`
	Grid             config.Grid     `json:"grid,omitempty"`        // --set, --grid
	AllowFiles       []string        `json:"allow_files,omitempty"` // --allow-server-file

	Threads        []int              `json:"threads"`
	Seed           uint64             `json:"seed"`
	Warmup         time.Duration      `json:"warmup"`         // before each driven step; 0 for none
	Rate           float64            `json:"rate,omitempty"` // open loop; 0: closed loop
	Arrivals       engine.Arrivals    `json:"arrivals"`       // open loop's
	MaxBacklog     int                `json:"max_backlog,omitempty"`
	Client         client.Options     `json:"client"`           // TCP, NoPrepare, Transport (Auto resolved per server)
	Device         string             `json:"device,omitempty"` // "": the disk that holds the datadir
	ReportInterval time.Duration      `json:"report_interval"`  // progress lines with -v
	ServerCPUs     host.CPUs          `json:"server_cpus,omitempty"`
	ClientCPUs     host.CPUs          `json:"client_cpus,omitempty"`
	Counters       counters.Selection `json:"counters"`
	PMP            time.Duration      `json:"pmp,omitempty"` // stacks every PMP of each window; 0: none
	Perf           bool               `json:"perf,omitempty"`

	// Repeat is the repeats asked for: 0 is --repeat auto, which the
	// Runner's Design settles on the host that runs it. Slices is
	// --slices (0: by the design, or one a second); Budget --budget.
	Repeat       int           `json:"repeat"`
	Slices       int           `json:"slices"`
	Interleave   string        `json:"interleave"` // InterleaveTest or InterleavePass (Decide settles the Layout)
	Restore      string        `json:"restore"`    // RestoreAuto, RestoreReload, RestoreSnapshot
	UntilDecided bool          `json:"until_decided,omitempty"`
	Budget       time.Duration `json:"budget,omitempty"`
}

// Design is how a Runner repeats and looks: the Spec's repeats and slices
// where it gives them, else what --repeat auto designs from the host's
// variance components (the application's design, which sets it before the
// run), and the looks --until-decided may take within the budget.
type Design struct {
	Repeat int
	// Slices is the slices per repeat of a sliced test (0: one a second,
	// 4 to 20); WriteSlices, if set, that of a sliced step that writes
	// (--repeat auto designs the two kinds apart).
	Slices, WriteSlices int
	// Looks is how many looks (the first and its follow-ups) the run may
	// take, Step how many repeats each follow-up adds (half the first
	// look's by default), Budget the wall time the follow-ups may spend
	// (0 for none). Looks is recorded with every run (each look is judged
	// at the level that keeps the false positives over all of them within
	// α: result.Run.Looks).
	Looks, Step int
	Budget      time.Duration
}

// design is what the spec itself says of the design, before --repeat
// auto is designed.
func (s Spec) design() Design {
	d := Design{Repeat: s.Repeat, Slices: s.Slices, Budget: s.Budget}
	if s.UntilDecided {
		d.Looks = DefaultLooks
	}
	return d
}

// JobSpec is the Spec a fleet job carries, as JSON: Parse's, of suite s
// with the parameters given (the seed among them) and the files the
// submitter's suite read.
func JobSpec(s suite.Suite, given map[string]string, files map[string][]byte) (json.RawMessage, error) {
	v, err := ValuesOf(s, given)
	if err != nil {
		return nil, err
	}
	p, err := Parse(s, v.WithFiles(files))
	if err != nil {
		return nil, err
	}
	return json.Marshal(p.Spec)
}

// FromSpec is the Runner of a Spec that a fleet job carried (JobSpec):
// its version checked, its Given parsed again (Parse, with the files the
// job carried) and found to make the same Spec. A spec of a version this
// qpslab does not know, or one whose fields are not what its parameters
// make, is refused in one line, rather than run half understood.
func FromSpec(raw json.RawMessage, files map[string][]byte) (*Runner, error) {
	var sp Spec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		return nil, fmt.Errorf("the job's spec cannot be read (%v): submit it again with this qpslab", err)
	}
	if sp.Version < 1 || sp.Version > SpecVersion {
		return nil, fmt.Errorf("the job's spec is of version %d, and this qpslab reads versions 1 to %d: upgrade this agent's qpslab to the submitter's", sp.Version, SpecVersion)
	}
	s, err := suite.Get(sp.Suite)
	if err != nil {
		return nil, err
	}
	v, err := ValuesOf(s, sp.Given)
	if err != nil {
		return nil, err
	}
	p, err := Parse(s, v.WithFiles(files))
	if err != nil {
		return nil, err
	}
	got, _ := json.Marshal(p.Spec)
	want, _ := json.Marshal(sp)
	if !bytes.Equal(got, want) {
		return nil, fmt.Errorf("the job's spec is not what its parameters make here (%s): submit it again with this qpslab", specDiff(want, got))
	}
	return p, nil
}

// specDiff names the first field where two specs' JSON differ.
func specDiff(a, b []byte) string {
	var x, y map[string]json.RawMessage
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	keys := slices.Sorted(maps.Keys(x))
	for k := range y {
		if _, ok := x[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if !bytes.Equal(x[k], y[k]) {
			return fmt.Sprintf("%s: %s, here %s", k, orNone(x[k]), orNone(y[k]))
		}
	}
	return "the same fields"
}

func orNone(b json.RawMessage) string {
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}
