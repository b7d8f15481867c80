package sandbox

// SetHook lets the tests act at known points of a start (see testHook); the
// returned function removes the hook.
func SetHook(f func(phase string, pid int)) func() {
	testHook = f
	return func() { testHook = nil }
}
