package result

import (
	"slices"
	"strings"
	"sync"
)

// Conditions: which of a run's params make runs repeats of each other
// (Run.Conditions) is partly the plan's and the client's, the same for
// every suite (commonConditions), and partly each suite's own: its table
// size, its mix, its pacing. A suite declares its own (suite.Suite's
// Conditions), and internal/suite registers them here when the suite
// registers, as it does its layouts.

var conditions = struct {
	sync.RWMutex
	m   map[string][]string // by suite: the common conditions and its own, sorted, each once
	all []string            // the common conditions and every registered suite's
}{m: map[string][]string{}, all: sortedOnce(commonConditions)}

// RegisterConditions makes params, beside the common ones, the conditions
// of suite's runs: names as the runs record them in Params. internal/suite
// calls it when a suite registers; a name Conditions could not write (empty,
// or holding '=' or ',') is a programming error.
func RegisterConditions(suite string, params []string) {
	for _, p := range params {
		if p == "" || strings.ContainsAny(p, "=,") {
			panic("result: suite " + suite + ": condition " + p + ": a param's name, without '=' or ','")
		}
	}
	conditions.Lock()
	defer conditions.Unlock()
	conditions.m[suite] = sortedOnce(commonConditions, params)
	var every [][]string
	for _, ps := range conditions.m {
		every = append(every, ps)
	}
	conditions.all = sortedOnce(every...)
}

// ConditionParams are the params that make runs of suite repeats of each
// other: the common ones and those the suite declares, sorted. For a suite
// that is not registered (a run from a qpslab that had it, or one a test
// made) they are every registered suite's: such runs are told apart by
// whatever any suite tells its runs apart by.
func ConditionParams(suite string) []string { return slices.Clone(conditionParams(suite)) }

// conditionParams is ConditionParams without the copy, for Conditions.
func conditionParams(suite string) []string {
	conditions.RLock()
	defer conditions.RUnlock()
	if ps, ok := conditions.m[suite]; ok {
		return ps
	}
	return conditions.all
}

func sortedOnce(lists ...[]string) []string {
	out := slices.Concat(lists...)
	slices.Sort(out)
	return slices.Compact(out)
}
