package engine

import "context"

// Outcome is what one event did: the statements it issued (sysbench's
// "queries": reads, writes and other, BEGIN and COMMIT included) and the rows
// it read or changed.
type Outcome struct {
	Statements int
	Rows       int64
}

// Worker runs events on its own dedicated connection. One goroutine owns a
// worker; Event is never called concurrently on the same worker.
type Worker interface {
	// Event runs one event (a statement, or a transaction of several). On an
	// error inside a transaction the worker rolls back before returning, so
	// the connection is ready for the next event.
	Event(ctx context.Context) (Outcome, error)
	Close() error
}

// Workload makes workers. id runs from 0 to threads-1; a workload that binds
// work to a thread (sysbench's scan reads table id%tables+1) uses it.
type Workload interface {
	NewWorker(ctx context.Context, id int) (Worker, error)
}
