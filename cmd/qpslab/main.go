// Command qpslab is a database performance lab: it runs benchmarks against
// servers it starts itself from named builds and configs. This package only
// wires cobra commands to the internal packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/version"
	_ "github.com/qpslab/qpslab/internal/workload" // registers every suite
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRoot().ExecuteContext(ctx)
	// Whatever path led here (success, error, SIGINT, SIGTERM), no server this
	// process started and did not detach outlives it.
	if serr := sandbox.StopAll(); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "qpslab: interrupted; every server this run started has been stopped")
			os.Exit(130)
		}
		fmt.Fprintln(os.Stderr, "qpslab: "+oneLine(err.Error()))
		var gate *report.GateFailed // detect --fail-on
		if errors.As(err, &gate) {
			os.Exit(gate.ExitCode())
		}
		os.Exit(1)
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "qpslab",
		Short: "A database performance lab: did this build or config make my database faster or slower?",
		Long: `qpslab benchmarks MariaDB, MySQL and PostgreSQL servers that it starts itself,
each from a named build (a version's binaries) and a named config (a my.cnf or
postgresql.conf fragment), in a sandbox of its own, and RocksDB's db_bench
with named option sets. It runs benchmark suites
(qpslab suites lists them) over builds × configs × thread counts × repeats,
interleaved, keeps every run in its store, and compares, reports and follows
the results over history.

Files live in the qpslab home: $QPSLAB_HOME, by default ~/.qpslab, or
/var/lib/qpslab when run as root (PostgreSQL refuses to run as root, so qpslab
runs it as an unprivileged user, which must be able to reach the datadir).
Registry artifacts are cached in $QPSLAB_CACHE, by default <home>/cache.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		&cobra.Command{
			Use:   "version",
			Short: "Print qpslab's version",
			Args:  cobra.NoArgs,
			Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), version.String()) },
		},
		newBuildsCmd(),
		newConfigsCmd(),
		newServerCmd(),
		newSuitesCmd(),
		newRunCmd(),
		newHostCmd(),
		newLabelsCmd(),
		newCompareCmd(),
		newMetricsCmd(),
		newStacksCmd(),
		newReportCmd(),
		newImportCmd(),
		newDetectCmd(),
		newExportCmd(),
		newDemoCmd(),
		newServeCmd(),
		newTokensCmd(),
		newAgentCmd(),
		newFleetCmd(),
	)
	addStoreFlag(root)
	return root
}

// resolveHome returns the qpslab home.
func resolveHome() (home.Home, error) { return home.Resolve() }
