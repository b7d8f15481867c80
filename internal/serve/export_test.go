package serve

// TestBisector makes the Bisector the tests of "bisect this"
// (bisectjob_test.go) serve with: internal/bisect's, the one qpslab
// serve is given. It imports serve, so only a test of package serve_test
// may name it: bisector_test.go sets this.
var TestBisector func() Bisector
