package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/jobs"
)

func registry(e jobs.Env) build.Registry {
	return build.Registry{Dir: e.Home.Builds(), Cache: e.Home.Cache, Logs: e.Home.Logs()}
}

func newBuildsCmd() *cobra.Command {
	c := &cobra.Command{Use: "builds"}
	var available bool
	list := jobCmd("list", cobra.NoArgs,
		func(cmd *cobra.Command, e jobs.Env, _ []string) error {
			return jobs.Builds(cmd.Context(), e, available)
		})
	list.Flags().BoolVar(&available, "available", false, "")

	var flavor, basedir, program string
	var replace bool
	add := jobCmd("add NAME --flavor F (--basedir DIR | --path PROGRAM)", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			b, err := registry(e).AddFrom(cmd.Context(), args[0], flavor, basedir, program, replace)
			if err == nil {
				fmt.Fprintf(e.Out, "added build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, b.Where())
			}
			return err
		})
	add.Flags().StringVar(&flavor, "flavor", "", "")
	add.Flags().StringVar(&basedir, "basedir", "", "")
	add.Flags().StringVar(&program, "path", "", "")
	add.Flags().BoolVar(&replace, "replace", false, "")
	add.MarkFlagRequired("flavor")

	var o build.FetchOptions
	fetch := jobCmd("fetch FLAVOR-VERSION|URL", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			o.Log = e.Err
			b, err := registry(e).Fetch(cmd.Context(), args[0], o)
			if err == nil {
				fmt.Fprintf(e.Out, "build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, b.Basedir)
			}
			return err
		})
	fetch.Flags().StringVar(&o.Name, "name", "", "")
	fetch.Flags().StringVar(&o.FromFile, "from-file", "", "")
	fetch.Flags().StringVar(&o.SHA256, "sha256", "", "")
	fetch.Flags().BoolVar(&o.Official, "official", false, "")
	fetch.Flags().StringVar(&o.From, "from", "", "")
	fetch.Flags().StringVar(&o.Mirror, "mirror", "", "")
	fetch.Flags().BoolVar(&o.Replace, "replace", false, "")
	var co build.CompileOptions
	compile := jobCmd("compile SRC", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			co.Src, co.Progress = args[0], e.Err
			b, err := registry(e).Compile(cmd.Context(), co)
			if err == nil {
				fmt.Fprintf(e.Out, "build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, b.Where())
			}
			return err
		})
	compile.Flags().StringVar((*string)(&co.Flavor), "flavor", "", "")
	compile.Flags().StringVar(&co.Name, "name", "", "")
	compile.Flags().StringVar(&co.Commit, "commit", "", "")
	compile.Flags().StringVar(&co.CFlags, "cflags", "", "")
	compile.Flags().StringArrayVar(&co.CMakeOptions, "cmake-option", nil, "")
	compile.Flags().IntVar(&co.Jobs, "jobs", 0, "")
	compile.Flags().BoolVar(&co.Replace, "replace", false, "")
	var suite, into, mirror string
	source := jobCmd("source NAME=VERSION --suite SUITE --into DIR", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			logf := func(f string, a ...any) { fmt.Fprintf(e.Err, f+"\n", a...) }
			tar, err := registry(e).DebianSource(cmd.Context(), suite, args[0], into, mirror, logf)
			if err == nil {
				fmt.Fprintln(e.Out, tar)
			}
			return err
		})
	source.Flags().StringVar(&suite, "suite", "bookworm", "")
	source.Flags().StringVar(&into, "into", ".", "")
	source.Flags().StringVar(&mirror, "mirror", "", "")
	c.AddCommand(list, add, fetch, compile, source)
	return c
}
