package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/report"
)

const familyFlagHelp = "the config family: mysql (MariaDB and MySQL), postgres or rocksdb (db_bench option sets)"

func newConfigsCmd() *cobra.Command {
	c := &cobra.Command{Use: "configs", Short: "List, show and add config variants (my.cnf or postgresql.conf " +
		"fragments, db_bench option sets)"}
	configs := func(e app.Env) config.Store { return config.Store{Dir: e.Home.Configs()} }
	list := jobCmd("list", "List the shipped configs and your own", cobra.NoArgs,
		func(_ *cobra.Command, e app.Env, _ []string) error {
			cs, err := configs(e).List()
			if err != nil {
				return err
			}
			report.Warnings(e.Err, config.Errors(cs))
			return report.Print(e.Out, config.ListTable(cs), "text")
		})

	var showFam string
	var own bool
	show := jobCmd("show NAME", "Print a config's effective settings (--own: its file as it is)", cobra.ExactArgs(1),
		func(_ *cobra.Command, e app.Env, args []string) error {
			cfg, err := configs(e).Lookup(args[0], showFam)
			if err != nil {
				return err
			}
			return config.WriteShow(e.Out, cfg, own)
		})
	show.Flags().StringVar(&showFam, "family", "", familyFlagHelp+"; needed only when both have the name")
	show.Flags().StringVar(&showFam, "flavor", "", "the flavor the config is for")
	show.Flags().MarkDeprecated("flavor", "use --family")
	show.Flags().BoolVar(&own, "own", false, "print only the config's own file, not the settings it inherits")

	var o config.AddOptions
	var addFam string
	add := jobCmd("add NAME FILE", "Add FILE as config NAME, based on default unless --base says otherwise",
		cobra.ExactArgs(2),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			o.BaseIsDefault = !cmd.Flags().Changed("base")
			cfg, err := configs(e).AddFamily(args[0], args[1], addFam, o)
			if err == nil {
				config.SayAdded(e.Out, cfg)
			}
			return err
		})
	add.Flags().BoolVar(&o.Replace, "replace", false, "overwrite your existing config of that name")
	add.Flags().StringVar(&addFam, "family", "", familyFlagHelp+", when the file's extension does not tell")
	add.Flags().StringVar(&o.Base, "base", config.DefaultBase, "the config this one is laid over, or none")
	c.AddCommand(list, show, add)
	return c
}
