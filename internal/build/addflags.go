package build

import (
	"context"
	"fmt"
)

// AddFrom registers build b as qpslab builds add names it: its Name, the
// flavor by name, and its install prefix (Basedir) or, for rocksdb, its
// db_bench (Program); exactly one of the two.
func (r Registry) AddFrom(ctx context.Context, flavor string, b Build, replace bool) (Build, error) {
	name, basedir, program := b.Name, b.Basedir, b.Program
	f, err := ParseFlavor(flavor)
	if err != nil {
		return Build{}, err
	}
	switch {
	case basedir == "" && program == "":
		return Build{}, fmt.Errorf("name the build's install prefix with --basedir DIR (or, for rocksdb, its db_bench with --path PROGRAM)")
	case basedir != "" && program != "":
		return Build{}, fmt.Errorf("--basedir and --path exclude each other: give the folder or the program")
	case program != "" && f.HasServer():
		return Build{}, fmt.Errorf("--path names a rocksdb build's db_bench; a %s build is an install prefix: give --basedir DIR", f)
	case program != "":
		return r.AddProgram(ctx, name, program, replace)
	}
	return r.Add(ctx, name, f, basedir, replace)
}

// Where is the build's program (rocksdb) or else its basedir.
func (b Build) Where() string {
	if b.Program != "" {
		return b.Program
	}
	return b.Basedir
}
