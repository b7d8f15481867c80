package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, and fails the test (naming what it
// waited for) if it does not hold within the time given. It waits for an
// event, not for a time: within is only the bound past which the event is
// taken as never coming.
//
// Between checks it sleeps a little: 10 ms at first, doubling up to half a
// second, so that a condition met at once costs little time and one that
// is slow to check (a qpslab subprocess, a query) is not checked in a busy
// loop. The sleep is the poll's pace, not what the test waits for.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	pause := 10 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(pause)
		pause = min(2*pause, 500*time.Millisecond)
	}
}
