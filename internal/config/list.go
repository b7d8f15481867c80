package config

import "github.com/qpslab/qpslab/internal/table"

// ListTable is qpslab configs list: each config's name, family, base (-
// for none), hash (12 hex digits, or "broken" for one that cannot be
// resolved) and source. Errors says why each broken one is broken.
func ListTable(cs []Config) *table.Table {
	t := table.New("NAME", "FAMILY", "BASE", "HASH", "SOURCE")
	for _, c := range cs {
		hash, base := "broken", c.Base
		if c.Err == nil {
			hash = c.Hash()[:12]
		}
		if base == "" {
			base = "-"
		}
		t.Add(c.Name, string(c.Family), base, hash, c.Source)
	}
	return t
}

// Errors are why the broken configs of cs cannot be resolved, in order.
func Errors(cs []Config) []error {
	var errs []error
	for _, c := range cs {
		if c.Err != nil {
			errs = append(errs, c.Err)
		}
	}
	return errs
}
