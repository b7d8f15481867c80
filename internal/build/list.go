package build

import "github.com/qpslab/qpslab/internal/table"

// ListTable is qpslab builds list: each build's name, flavor, version,
// source and basedir (a build named by its program: the program).
func ListTable(bs []Build) *table.Table {
	t := table.New("NAME", "FLAVOR", "VERSION", "SOURCE", "BASEDIR")
	for _, b := range bs {
		where := b.Basedir
		if b.Program != "" {
			where = b.Program
		}
		t.Add(b.Name, string(b.Flavor), b.Version, b.Source, where)
	}
	return t
}
