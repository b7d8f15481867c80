// Command qpslab is a database performance lab: it runs benchmarks against
// servers it starts itself from named builds and configs. This package only
// wires cobra commands to the internal packages; each command's long help
// is docs/help/<its path, words joined by ->.txt.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/docs"
	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/version"
	_ "github.com/qpslab/qpslab/internal/workload" // registers every suite
)

func main() {
	ctx, _ := app.Interruptible(context.Background(), os.Stderr) // until the process ends
	err := newRoot().ExecuteContext(ctx)
	// Whatever path led here (success, error, SIGINT, SIGTERM), no server this
	// process started and did not detach outlives it.
	if serr := sandbox.StopAll(); serr != nil && err == nil {
		err = serr
	}
	os.Exit(app.ExitCode(ctx, err, os.Stderr))
}

func newRoot() *cobra.Command {
	root := &cobra.Command{Use: "qpslab", Short: "A database performance lab: did this build or config make my " +
		"database faster or slower?", SilenceErrors: true, SilenceUsage: true}
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		&cobra.Command{Use: "version", Short: "Print qpslab's version", Args: cobra.NoArgs,
			Run: func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), version.String()) }},
		newBuildsCmd(), newConfigsCmd(), newServerCmd(), newSuitesCmd(), newRunCmd(), newHostCmd(),
		newLabelsCmd(), comparisonCmd("compare BASE OTHER...", "Compare builds test by test: the verdict, relative "+
			"QPS with paired intervals and the noise floor, group statistics", true), newMetricsCmd(), newStacksCmd(),
		comparisonCmd("report BASE OTHER... --html FILE", "Write one self-contained HTML report: relative QPS "+
			"charts, timelines, per-op metrics, hosts, config diff", false), newImportCmd(), newTargetsCmd(),
		newDetectCmd(), newExportCmd(), newDemoCmd(), newStudyCmd(), newServeCmd(), newTokensCmd(), newAgentCmd(),
		newFleetCmd(), newRunsCmd(), newBisectCmd(), newStoreCmd())
	groupCommands(root)
	addStoreFlag(root)
	setHelp(root)
	return root
}

// groups are the sections of qpslab --help, each with its commands, as a
// reader looks for them: running and measuring, reading the results,
// what is run (builds, configs, servers), and sharing the results.
var groups = []struct {
	id, title string
	commands  []string
}{
	{"run", "Run and measure:", []string{"run", "demo", "study", "bisect", "host", "suites"}},
	{"results", "Results and analysis:", []string{"compare", "metrics", "report", "detect", "stacks", "labels", "runs",
		"import", "export", "store"}},
	{"things", "Builds, configs and servers:", []string{"builds", "configs", "server", "targets"}},
	{"share", "Dashboard and fleet:", []string{"serve", "tokens", "fleet", "agent"}},
}

// groupCommands puts each of root's commands in its group (groups); a
// command in none stays under cobra's "Additional Commands" (help,
// version), and a test finds one that should not.
func groupCommands(root *cobra.Command) {
	byName := map[string]*cobra.Command{}
	for _, c := range root.Commands() {
		byName[c.Name()] = c
	}
	for _, g := range groups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, name := range g.commands {
			c, ok := byName[name]
			if !ok {
				panic("groups names command " + name + ", which qpslab does not have")
			}
			c.GroupID = g.id
		}
	}
}

// help is the text of help file name (docs/help); a missing one is a
// programming error, which every help test finds.
func help(name string) string {
	h, ok := docs.Help(name)
	if !ok {
		panic("no help file docs/help/" + name + ".txt")
	}
	return h
}

// setHelp gives c and every command under it that has no long help its
// help file (docs/help), if there is one. Short helps and flags' usage
// are literals where each command and flag is defined.
func setHelp(c *cobra.Command) {
	path := strings.TrimPrefix(c.CommandPath(), "qpslab ") // the help file's name, words joined by -
	if h, ok := docs.Help(strings.ReplaceAll(path, " ", "-")); ok && c.Long == "" {
		c.Long = h
	}
	for _, s := range c.Commands() {
		setHelp(s)
	}
}

// withEnv is a RunE that calls f with the command's env: the home, its
// --store and its writers.
func withEnv(f func(*cobra.Command, app.Env, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		e, err := env(cmd)
		if err != nil {
			return err
		}
		return f(cmd, e, args)
	}
}

// jobCmd is a command that runs f with its env.
func jobCmd(use, short string, args cobra.PositionalArgs,
	f func(*cobra.Command, app.Env, []string) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: args, RunE: withEnv(f)}
}

func addStoreFlag(root *cobra.Command) {
	root.PersistentFlags().String("store", os.Getenv("QPSLAB_STORE"),
		"results store: a SQLite file (default <home>/qpslab.db) or postgres://user@host/db (the password is never "+
			"stored); $QPSLAB_STORE")
}

// storeDSN is the --store flag of the command line cmd belongs to: passed
// on to what needs it, never kept in a global.
func storeDSN(cmd *cobra.Command) string {
	if f := cmd.Flag("store"); f != nil {
		return f.Value.String()
	}
	return os.Getenv("QPSLAB_STORE")
}

// env is the command's env: the home, its --store and its writers.
func env(cmd *cobra.Command) (app.Env, error) {
	h, err := home.Resolve()
	return app.Env{Home: h, Store: storeDSN(cmd), Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()}, err
}
