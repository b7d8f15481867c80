package arch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

// leaky is a suite a test declares (this file stands for its package) that
// reaches the store: what CheckSuite must refuse.
type leaky struct{}

func (leaky) Name() string            { return "leaky" }
func (leaky) Summary() string         { return "a suite that stores its own runs" }
func (leaky) Params() []suite.Param   { return nil }
func (leaky) Tests() []suite.Test     { return nil }
func (leaky) Layouts() []suite.Layout { return nil }
func (leaky) Figures() []suite.Figure { return nil }
func (leaky) Conditions() []string    { return nil }
func (leaky) Configure(suite.Values) (*suite.Plan, error) {
	_, err := store.Open(context.Background(), "", "") // what no suite may do
	return nil, err
}

// The suites' rule catches a suite a test declares by the file that
// declares it, as it does a suite's package.
func TestTheSuiteRuleCanFail(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	problems := CheckSuite(root, leaky{})
	if len(problems) != 1 || !strings.Contains(problems[0], "suite leaky (internal/arch/suiterule_test.go) imports internal/store") {
		t.Errorf("CheckSuite(leaky) = %q, want the store it imports refused", problems)
	}
}
