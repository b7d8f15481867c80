package build

import (
	"context"
	"fmt"
)

// AddFrom registers build name as qpslab builds add names it: the flavor
// by name, and its install prefix (basedir) or, for rocksdb, its db_bench
// (program); exactly one of the two.
func (r Registry) AddFrom(ctx context.Context, name, flavor, basedir, program string, replace bool) (Build, error) {
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
