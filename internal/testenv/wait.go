package testenv

import (
	"testing"
	"time"
)

// WaitFor waits until cond holds, checking it every few milliseconds, and
// fails t naming what it waited for when within passes first. Tests wait
// for events (a log line, a file, a sample, a state) this way, never for a
// fixed time: a slow or stalled machine only makes the wait longer.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
