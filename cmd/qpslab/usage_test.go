package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/qpslab/qpslab/docs"
)

// Every command has its one line of help and every flag it defines its
// usage (the code's, or docs/usage.txt's: a suite's command shares its
// entries with every suite's), and usage.txt names nothing that no
// command has: a renamed command or flag shows here.
func TestEveryCommandAndFlagSaysWhatItIs(t *testing.T) {
	used := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "qpslab ")
		if c.Short == "" {
			t.Errorf("qpslab %s has no short help: add it under [%s] in docs/usage.txt", path, path)
		}
		if _, ok := docs.Short(path); ok {
			used[path] = true
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Usage == "" {
				t.Errorf("qpslab %s --%s has no usage: add it under [%s] in docs/usage.txt", path, f.Name, path)
			}
			if _, key, ok := usageOf(c, f.Name); ok {
				used[key] = true
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot())
	for _, k := range docs.Usages() {
		if !used[k] {
			t.Errorf("docs/usage.txt has %q, which no command or flag is", k)
		}
	}
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
