package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
)

// Builds writes the table of qpslab builds list: each build's name,
// flavor, version, source and basedir (a build named by its program: the
// program).
func Builds(w io.Writer, bs []build.Build) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFLAVOR\tVERSION\tSOURCE\tBASEDIR")
	for _, b := range bs {
		where := b.Basedir
		if b.Program != "" {
			where = b.Program
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.Name, b.Flavor, b.Version, b.Source, where)
	}
	return tw.Flush()
}

// Configs writes the table of qpslab configs list: each config's name,
// family, base, hash (12 hex digits, or "broken" for one that cannot be
// resolved) and source. Why each broken one is broken goes to warn, a line
// each, as qpslab's errors read.
func Configs(w, warn io.Writer, cs []config.Config) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFAMILY\tBASE\tHASH\tSOURCE")
	for _, c := range cs {
		hash := "broken"
		if c.Err == nil {
			hash = c.Hash()[:12]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Name, c.Family, dash(c.Base), hash, c.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range cs {
		if c.Err != nil {
			fmt.Fprintf(warn, "qpslab: %v\n", c.Err)
		}
	}
	return nil
}

// ConfigShow writes what qpslab configs show prints: the config's
// effective settings, or with own its file as it is.
func ConfigShow(w io.Writer, c config.Config, own bool) error {
	out := c.Content
	if own {
		out = c.Own
	}
	_, err := w.Write(out)
	return err
}

// ConfigAdded says that qpslab configs add stored a config: its ID,
// family, base and file.
func ConfigAdded(w io.Writer, c config.Config) {
	on := "no base"
	if c.Base != "" {
		on = "based on " + c.Base
	}
	fmt.Fprintf(w, "added config %s (%s, %s) as %s\n", c.ID(), c.Family, on, c.Source)
}
