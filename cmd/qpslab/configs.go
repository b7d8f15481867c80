package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/report"
)

func configStore() (config.Store, error) {
	h, err := resolveHome()
	if err != nil {
		return config.Store{}, err
	}
	return config.Store{Dir: h.Configs()}, nil
}

const familyFlagHelp = "the config family: mysql (MariaDB and MySQL), postgres or rocksdb (db_bench option sets)"

func newConfigsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "configs",
		Short: "List, show and add config variants (my.cnf or postgresql.conf fragments, db_bench option sets)",
		Long: `A config is a my.cnf fragment (.cnf, MariaDB and MySQL), a postgresql.conf
fragment (.conf), or a db_bench option set (.flags, rocksdb builds): one flag
per line, --name=value, which the db_bench suite passes to db_bench after its
own (flags the build's db_bench does not know fail before the run). A config
may be based on another: a line

    # qpslab: base=default

(a comment to the servers) makes its effective settings the base's with the
config's own laid over them, option by option and [section] by [section];
bases chain. The effective settings are what a sandbox applies and what the
config's ID (name@hash) hashes, so editing a base changes the ID of every
config on it. A config without a base line is applied as it is.`,
	}
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the shipped configs and your own",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := configStore()
			if err != nil {
				return err
			}
			cs, err := s.List()
			if err != nil {
				return err
			}
			return report.Configs(cmd.OutOrStdout(), cmd.ErrOrStderr(), cs)
		},
	})

	var showFam string
	var own bool
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a config's effective settings (--own: its file as it is)",
		Long: `Print a config's effective settings: for a config with a base, the base
chain's settings with each config's own laid over them, each line that does not
come from the deepest base marked "# from NAME"; for one without, its file.
This is what a sandbox applies. --own prints the config's file as it is.

The config is looked up in both families; a name both have (default) needs
--family.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := configStore()
			if err != nil {
				return err
			}
			cfg, err := s.Lookup(args[0], showFam)
			if err != nil {
				return err
			}
			return report.ConfigShow(cmd.OutOrStdout(), cfg, own)
		},
	}
	show.Flags().StringVar(&showFam, "family", "", familyFlagHelp+"; needed only when both have the name")
	show.Flags().StringVar(&showFam, "flavor", "", "the flavor the config is for")
	show.Flags().MarkDeprecated("flavor", "use --family")
	show.Flags().BoolVar(&own, "own", false, "print only the config's own file, not the settings it inherits")
	c.AddCommand(show)

	var replace bool
	var addFam, base string
	add := &cobra.Command{
		Use:   "add NAME FILE",
		Short: "Add FILE as config NAME, based on default unless --base says otherwise",
		Long: `Add FILE as config NAME (.cnf: MySQL family, .conf: PostgreSQL, .flags: a
db_bench option set; --family for another extension).

BY DEFAULT THE NEW CONFIG IS BASED ON default: its effective settings are
qpslab's default config with FILE's settings laid over it, so a file that sets
two options changes two options. The base is recorded in the stored file as its
first line, "# qpslab: base=default". Pass --base NAME for another base, or
--base none for a config that is applied as it is (the server's own defaults
for everything FILE does not set). A base line already in FILE counts; --base
must then agree with it.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := configStore()
			if err != nil {
				return err
			}
			o := config.AddOptions{Base: base, BaseIsDefault: !cmd.Flags().Changed("base"), Replace: replace}
			if addFam != "" {
				if o.Family, err = config.ParseFamily(addFam); err != nil {
					return err
				}
			}
			cfg, err := s.AddWith(args[0], args[1], o)
			if err != nil {
				return err
			}
			report.ConfigAdded(cmd.OutOrStdout(), cfg)
			return nil
		},
	}
	add.Flags().BoolVar(&replace, "replace", false, "overwrite your existing config of that name")
	add.Flags().StringVar(&addFam, "family", "", familyFlagHelp+", when the file's extension does not tell")
	add.Flags().StringVar(&base, "base", config.DefaultBase, "the config this one is laid over, or none")
	c.AddCommand(add)
	return c
}
