package engine

import (
	"context"
	"time"
)

// Outcome is what one event did: the statements it issued (sysbench's
// "queries": reads, writes and other, BEGIN and COMMIT included), the rows
// it read or changed, and, for a workload whose events are of several kinds
// (inserts beside queries), its kind: the engine then keeps each kind's
// count, rate and latency apart (result.OpTotals). "" is no kind.
type Outcome struct {
	Statements int
	Rows       int64
	Kind       string
	// Parts, if set, are timed pieces of the event (a script's statements):
	// each is counted and timed as an operation of its own kind beside the
	// event's, or counted as an error of its kind when it failed, in the
	// measured window whether the event succeeded or not. The engine reads
	// them before the next Event: a worker may reuse the slice.
	Parts []Part
	// Retries are the tries of the event that failed before its last (a
	// worker that tries a transaction again within one event, so that the
	// event's time spans every try, as TPC-C's response time does): each
	// counts as an error of the event's kind and a retry, as an event the
	// engine restarts does.
	Retries int
}

// Part is one timed piece of an event (Outcome.Parts).
type Part struct {
	Kind   string
	Time   time.Duration
	Failed bool
}

// Worker runs events on its own dedicated connection. One goroutine owns a
// worker; Event is never called concurrently on the same worker.
type Worker interface {
	// Event runs one event (a statement, or a transaction of several). On an
	// error inside a transaction the worker rolls back before returning, so
	// the connection is ready for the next event. On an error the Outcome's
	// Kind still says which kind of event failed.
	Event(ctx context.Context) (Outcome, error)
	Close() error
}

// Workload makes workers. id runs from 0 to threads-1; a workload that binds
// work to a thread (sysbench's scan reads table id%tables+1) uses it.
type Workload interface {
	NewWorker(ctx context.Context, id int) (Worker, error)
}

// Scheduler is implemented by a worker that keeps its own schedule (the
// Insert Benchmark's paced inserter): Next waits until its next event's
// intended start and returns it, or returns false when it has no more
// events (or ctx is done). Its events' response times count from the
// intended start, so a second the server fell behind in shows as time
// waited, not as a gap. Options.Rate does not apply to it; workers that are
// not Schedulers run closed loop beside it.
type Scheduler interface {
	Next(ctx context.Context) (intended time.Time, more bool)
}

// ErrorClass is what an event's error means for the run.
type ErrorClass int

const (
	// Fatal errors end the run.
	Fatal ErrorClass = iota
	// Retryable errors (a deadlock, a lock-wait timeout) restart the event
	// when Options.RetryErrors is set; they are counted as errors and
	// retries.
	Retryable
	// ConnectionLost errors end the run: the connection cannot be used.
	ConnectionLost
)

// Classifier is implemented by a workload that knows its errors: the engine
// knows nothing of SQL, so without one every error is Fatal.
type Classifier interface {
	Classify(err error) ErrorClass
}
