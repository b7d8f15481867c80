package testenv

import (
	"context"
	"strconv"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
)

// Int is the one integer query q answers on the server at ep (a count, a
// balance), failing the test on anything else.
func Int(t testing.TB, ep client.Endpoint, q string) int64 {
	t.Helper()
	_, rows, err := client.Query(context.Background(), ep, false, q)
	if err != nil || len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("%s: %v (%d rows)", q, err, len(rows))
	}
	n, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}
