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
