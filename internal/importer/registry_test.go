package importer

// The metric registry fills as the packages that own figures initialise:
// the tests see every figure, as the binary does.
import _ "github.com/qpslab/qpslab/internal/workload"
