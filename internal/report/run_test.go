package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestProgressCountsInOrder: runs that start out of their places in the
// plan (a round's labels in the order B, A) are still counted 1, 2, 3.
func TestProgressCountsInOrder(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, 4)
	for _, i := range []int{1, 0, 2, 3} {
		p.Start(i, "t")
		p.Done(i)
	}
	want := "[1/4] t\n[2/4] t\n[3/4] t\n[4/4] t\n"
	if got := b.String(); got != want {
		t.Fatalf("progress lines:\n%s\nwant:\n%s", got, strings.TrimSpace(want))
	}
}
