package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/target"
)

func newTargetsCmd() *cobra.Command {
	var s target.Spec
	var replace bool
	add := jobCmd("add NAME", "Register a server: its flavor, where it listens, as whom, and where its password is "+
		"read from (never the password)", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			s.Name, s.PortSet = args[0], cmd.Flags().Changed("port")
			return app.TargetAdd(e, s, replace)
		})
	add.Flags().StringVar(&s.Flavor, "flavor", "", "the server's flavor: mariadb, mysql or postgres (targets check "+
		"refuses a server of another)")
	add.Flags().StringVar(&s.DSN, "dsn", "", "where it listens as a URL without password or parameters: "+
		"mysql://USER@HOST:PORT/DB or postgres://USER@HOST:PORT/DB")
	add.Flags().StringVar(&s.Host, "host", "", "its host name or address (with --port)")
	add.Flags().StringVar(&s.Socket, "socket", "", "its unix socket's path, for a server on this host")
	add.Flags().StringVar(&s.User, "user", "", "the account qpslab logs in as (default root, or postgres)")
	add.Flags().StringVar(&s.Database, "database", "", "the database qpslab works in there: created if absent, or "+
		"one that holds no tables (default qpslab)")
	add.Flags().StringVar(&s.PasswordEnv, "password-env", "", "the environment variable the password is read from at "+
		"each use")
	add.Flags().StringVar(&s.PasswordFile, "password-file", "", "the file whose first line is the password, read at "+
		"each use")
	add.Flags().StringVar(&s.Agent, "agent", "", "the fleet agent on the server's host, if one runs there: a spread "+
		"run (fleet submit --load-hosts) has it measure the server's CPU, context switches and disk per operation")
	add.Flags().IntVar(&s.Port, "port", 0, "its TCP port (default 3306, or 5432 for postgres)")
	add.Flags().BoolVar(&replace, "replace", false, "register anew a target of that name")
	c := &cobra.Command{Use: "targets", Short: "Register the servers qpslab did not start (a replica, a server on " +
		"its own host, a managed database) for --target"}
	c.AddCommand(add, jobCmd("list", "List the registered targets: where each listens, as whom, and where its "+
		"password is read from", cobra.NoArgs, func(_ *cobra.Command, e app.Env, _ []string) error {
		return app.TargetList(e)
	}), jobCmd("check NAME", "Connect to a target: reachable, version and flavor, qpslab's database (created or "+
		"claimed while empty), max_connections, counters", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			return app.TargetCheck(cmd.Context(), e, args[0])
		}), jobCmd("remove NAME", "Forget a target; its server and qpslab's database on it are left as they are",
		cobra.ExactArgs(1), func(_ *cobra.Command, e app.Env, args []string) error {
			return app.TargetRemove(e, args[0])
		}))
	return c
}
