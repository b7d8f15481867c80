package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/target"
)

func newTargetsCmd() *cobra.Command {
	var s target.Spec
	var replace bool
	add := jobCmd("add NAME", cobra.ExactArgs(1), func(cmd *cobra.Command, e jobs.Env, args []string) error {
		s.Name, s.PortSet = args[0], cmd.Flags().Changed("port")
		return jobs.TargetAdd(e, s, replace)
	})
	for name, v := range map[string]*string{"flavor": &s.Flavor, "dsn": &s.DSN, "host": &s.Host, "socket": &s.Socket,
		"user": &s.User, "database": &s.Database, "password-env": &s.PasswordEnv, "password-file": &s.PasswordFile,
		"agent": &s.Agent} {
		add.Flags().StringVar(v, name, "", "")
	}
	add.Flags().IntVar(&s.Port, "port", 0, "")
	add.Flags().BoolVar(&replace, "replace", false, "")
	c := &cobra.Command{Use: "targets"}
	c.AddCommand(add, jobCmd("list", cobra.NoArgs, func(_ *cobra.Command, e jobs.Env, _ []string) error {
		return jobs.TargetList(e)
	}), jobCmd("check NAME", cobra.ExactArgs(1), func(cmd *cobra.Command, e jobs.Env, args []string) error {
		return jobs.TargetCheck(cmd.Context(), e, args[0])
	}), jobCmd("remove NAME", cobra.ExactArgs(1), func(_ *cobra.Command, e jobs.Env, args []string) error {
		return jobs.TargetRemove(e, args[0])
	}))
	return c
}
