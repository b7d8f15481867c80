package config

import (
	"fmt"
	"io"
)

// WriteShow writes what qpslab configs show prints: the config's
// effective settings, or with own its file as it is.
func WriteShow(w io.Writer, c Config, own bool) error {
	out := c.Content
	if own {
		out = c.Own
	}
	_, err := w.Write(out)
	return err
}

// SayAdded says that qpslab configs add stored a config: its ID, family,
// base and file.
func SayAdded(w io.Writer, c Config) {
	on := "no base"
	if c.Base != "" {
		on = "based on " + c.Base
	}
	fmt.Fprintf(w, "added config %s (%s, %s) as %s\n", c.ID(), c.Family, on, c.Source)
}
