package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/qpslab/qpslab/internal/history"
)

// OrderNote writes the one line that says which series were put in order
// by build name rather than by version or time (history.Series.ByName),
// naming the builds without a version, so that nobody takes a name order
// for a release order. It writes nothing when no series is in name order.
func OrderNote(w io.Writer, series []history.Series) error {
	n, mixed := 0, false
	var builds []string
	seen := map[string]bool{}
	for _, s := range series {
		if !s.ByName() {
			continue
		}
		n++
		mixed = mixed || s.Order != history.OrderName
		for _, p := range s.Points {
			if p.Version == "" && !seen[p.Build] {
				seen[p.Build] = true
				builds = append(builds, p.Build)
			}
		}
	}
	if n == 0 {
		return nil
	}
	const most = 6
	names := strings.Join(builds[:min(len(builds), most)], ", ")
	if len(builds) > most {
		names += fmt.Sprintf(" and %d more", len(builds)-most)
	}
	if !mixed {
		_, err := fmt.Fprintf(w, "order: %d of %d series are in build-name order (ma9 < ma10), as their builds have no version and no time: %s; import them with --version to order them by it\n",
			n, len(series), names)
		return err
	}
	_, err := fmt.Fprintf(w, "order: in %d of %d series, builds with no version and no time come after the versioned ones, in name order (ma9 < ma10): %s; import them with --version to order them by it\n",
		n, len(series), names)
	return err
}
