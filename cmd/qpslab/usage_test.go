package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every command has its one line of help and every flag it defines its
// usage, each a literal where the command or flag is defined.
func TestEveryCommandAndFlagSaysWhatItIs(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "qpslab ")
		if c.Short == "" {
			t.Errorf("qpslab %s has no short help: give its command a Short", path)
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Usage == "" {
				t.Errorf("qpslab %s --%s has no usage: give it one where the flag is defined", path, f.Name)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot())
}

// qpslab --help lists its commands in groups (run and measure; results
// and analysis; builds, configs and servers; dashboard and fleet): every
// command but help and version is in one, so a new command must be given
// its place.
func TestCommandGroups(t *testing.T) {
	root := newRoot()
	for _, c := range root.Commands() {
		if c.GroupID == "" && c.Name() != "help" && c.Name() != "version" && c.Name() != "completion" {
			t.Errorf("command %s is in no group of qpslab --help (main.go's groups)", c.Name())
		}
	}
	var out strings.Builder
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if !strings.Contains(out.String(), "\n"+g.title+"\n") {
			t.Errorf("qpslab --help lacks the group %q:\n%s", g.title, out.String())
		}
	}
}
