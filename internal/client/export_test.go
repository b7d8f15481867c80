package client

import "context"

// OnEndHandled has f called each time the watcher of an ended context has
// done its part; the returned func removes f.
func OnEndHandled(f func(context.Context)) (remove func()) {
	endHandled.Store(&f)
	return func() { endHandled.Store(nil) }
}
