package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/table"
)

// Floors prints what an A/A run (qpslab run --aa) measured: how many of
// its tests it called significant (about α of them, where the method
// holds), and each test's noise floor kept for the host.
func Floors(w io.Writer, c *analysis.Comparison, floors []analysis.Floor, hostID string) {
	sig := 0
	for _, f := range floors {
		if f.Significant {
			sig++
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "A/A: %s against %s, the same server twice: %d of %d paired test(s) called significant at α = %.2f (where the method holds, about %.0f %% of them)\n",
		c.Others[0], c.Base, sig, len(floors), c.Alpha, 100*c.Alpha)
	fmt.Fprintf(w, "This host's noise floor (host %s), kept in the store: per test, the larger of how far the A/A value lies from 1 and half its %.0f %% interval;\n", short(hostID), 100*c.Confidence)
	fmt.Fprintln(w, "compare and the reports of runs on this host flag no change inside it. Measure it again at the budget you compare at, and after the host changes.")
	fmt.Fprintln(w)
	t := table.New("TEST", "THR", "ROUNDS", "A/A REL", "INTERVAL", "NOISE FLOOR")
	for _, f := range floors {
		mark := ""
		if f.Significant {
			mark = " *"
		}
		t.Add(f.Test, strconv.Itoa(f.Threads), strconv.Itoa(f.Rounds), fmt.Sprintf("%.3f%s", f.Rel, mark), fmt.Sprintf("[%.3f, %.3f]", f.Lo, f.Hi),
			fmt.Sprintf("±%.1f%%", 100*f.Floor))
	}
	if sig > 0 {
		t.Note("* significant in the A/A run: the two servers differed (an instance effect) or the test's noise exceeds what its rounds show")
	}
	Doc{Blocks: []Block{{Table: t}}}.Write(w, "text", false)
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
