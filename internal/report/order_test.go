package report

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/history"
)

// Series in build-name order are said to be, with the builds that have no
// version; series in version or time order say nothing.
func TestOrderNote(t *testing.T) {
	byName := history.Series{Order: history.OrderName, Points: []history.Point{{Build: "ma9_rel"}, {Build: "ma10_rel"}}}
	mixed := history.Series{Order: history.OrderVersionName, Points: []history.Point{{Build: "ma100244_rel", Version: "10.2.44"}, {Build: "ma9_rel"}, {Build: "nightly"}}}
	byVersion := history.Series{Order: history.OrderVersion, Points: []history.Point{{Build: "a", Version: "1"}, {Build: "b", Version: "2"}}}
	var b strings.Builder
	if err := OrderNote(&b, []history.Series{byName, mixed, byVersion}); err != nil {
		t.Fatal(err)
	}
	want := "order: in 2 of 3 series, builds with no version and no time come after the versioned ones, in name order (ma9 < ma10): ma9_rel, ma10_rel, nightly; import them with --version to order them by it\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
	b.Reset()
	OrderNote(&b, []history.Series{byName, byVersion})
	want = "order: 1 of 2 series are in build-name order (ma9 < ma10), as their builds have no version and no time: ma9_rel, ma10_rel; import them with --version to order them by it\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
	b.Reset()
	OrderNote(&b, []history.Series{byVersion, {Order: history.OrderTime}})
	if b.Len() != 0 {
		t.Errorf("a note without name order: %q", b.String())
	}
}
