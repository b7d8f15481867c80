// Package version holds qpslab's own version, set at link time by the Makefile
// (-X github.com/qpslab/qpslab/internal/version.Version=...). Every stored run
// records it.
package version

import (
	"fmt"
	"runtime"
)

// Version is the qpslab version (git describe), or "dev" for a plain go build.
var Version = "dev"

// String is the line `qpslab version` prints.
func String() string {
	return fmt.Sprintf("qpslab %s %s %s/%s", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
