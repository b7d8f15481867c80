package bisect

import (
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// A bisect step that pools its earlier plans' runs is judged at the level
// of all their looks: 4 and 4 and one plan of a single look are 9.
func TestPooledLooks(t *testing.T) {
	run := func(plan, looks string) result.Run {
		return result.Run{Plan: plan, Params: map[string]string{"looks": looks}}
	}
	runs := []result.Run{run("p1", "4"), run("p1", "4"), run("p2", "4"), run("p3", "")}
	if n := pooledLooks(runs); n != 9 {
		t.Errorf("pooled looks %d, want 9", n)
	}
	if n := pooledLooks(runs[:2]); n != 4 {
		t.Errorf("one plan's looks %d, want 4", n)
	}
}
