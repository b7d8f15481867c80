package client

import "context"

// OnEndHandled has f called each time the watcher of an ended context has
// done its part; the returned func removes f.
func OnEndHandled(f func(context.Context)) (remove func()) {
	endHandled.Store(&f)
	return func() { endHandled.Store(nil) }
}

// RefuseUring has the process behave as on a kernel that refuses io_uring
// (an old kernel, kernel.io_uring_disabled, a seccomp filter), which this
// host cannot show without changing the whole machine; the returned func
// undoes it.
func RefuseUring() (undo func()) {
	old := uringOK
	uringOK = func() bool { return false }
	return func() { uringOK = old }
}
