package bisect

// LockBisection is lockBisection, for the tests of the commands
// (package bisect_test, which run them through internal/app's Env).
var LockBisection = lockBisection
