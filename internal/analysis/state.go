package analysis

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/result"
)

// StateRow is one test's database state on one label, repeat by repeat:
// its state figure (counters.StateFigure: pages or blocks a statement
// read, per op) in each repeat, in the order they ran. Every repeat
// starts from the tables as loaded, so its values should agree; where
// they do not, the repeats measured different databases.
type StateRow struct {
	Test    string    `json:"test"`
	Threads int       `json:"threads"`
	Label   string    `json:"label"`
	Figure  string    `json:"figure"`
	Values  []float64 `json:"values"`
	// Spread is the largest value over the smallest, less 1.
	Spread float64 `json:"spread"`
}

// StateAgrees is the spread within which a test's repeats are said to
// agree on the database's state.
const StateAgrees = 0.1

// State are the state rows of every test (not the load) of sets with two
// repeats or more that recorded a state figure, in the sets' order.
func State(sets []Set) []StateRow {
	var out []StateRow
	for _, s := range sets {
		byKey := runsByKey(s.Runs)
		keys := make([]key, 0, len(byKey))
		for k := range byKey {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := byKey[keys[i]][0], byKey[keys[j]][0]
			if a.Step != b.Step {
				return a.Step < b.Step
			}
			return keys[i].test < keys[j].test || keys[i].test == keys[j].test && keys[i].threads < keys[j].threads
		})
		for _, k := range keys {
			runs := slices.Clone(byKey[k])
			if len(runs) < 2 || runs[0].Role == result.RoleLoad {
				continue
			}
			sort.SliceStable(runs, func(i, j int) bool {
				if runs[i].Plan != runs[j].Plan {
					return runs[i].Started.Before(runs[j].Started)
				}
				a, _ := strconv.Atoi(runs[i].Params["repeat"])
				b, _ := strconv.Atoi(runs[j].Params["repeat"])
				return a < b
			})
			row := StateRow{Test: k.test, Threads: k.threads, Label: s.Label}
			lo, hi := math.Inf(1), math.Inf(-1)
			m, ok := counters.StateFigure(runs...) // one figure for the row's runs
			if !ok {
				continue
			}
			for _, r := range runs {
				v, ok := m.Of(r)
				if !ok || !(v >= 0) || math.IsInf(v, 0) {
					continue
				}
				row.Figure = m.Name
				row.Values = append(row.Values, v)
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			if len(row.Values) < 2 {
				continue
			}
			switch {
			case hi == 0: // none read anything: alike
			case lo > 0:
				row.Spread = hi/lo - 1
			default:
				row.Spread = math.Inf(1)
			}
			out = append(out, row)
		}
	}
	return out
}
