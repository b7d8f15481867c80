package serve_test

import (
	"github.com/qpslab/qpslab/internal/bisect"
	"github.com/qpslab/qpslab/internal/serve"
)

// The tests of "bisect this" serve with the Bisector qpslab serve is
// given (cmd/qpslab wires the same).
func init() {
	serve.TestBisector = func() serve.Bisector { return &bisect.Dashboard{} }
}
