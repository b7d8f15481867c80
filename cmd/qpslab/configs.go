package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
)

func configStore() (config.Store, error) {
	h, err := resolveHome()
	if err != nil {
		return config.Store{}, err
	}
	return config.Store{Dir: h.Configs()}, nil
}

func newConfigsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "configs",
		Short: "List, show and add config variants (my.cnf or postgresql.conf fragments)",
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
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tFAMILY\tHASH\tSOURCE")
			for _, c := range cs {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.Name, c.Family, c.Hash()[:12], c.Source)
			}
			return w.Flush()
		},
	})
	var famFlag string
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a config's content",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := configStore()
			if err != nil {
				return err
			}
			f, err := build.ParseFlavor(famFlag)
			if err != nil {
				return err
			}
			cfg, err := s.Get(args[0], config.FamilyOf(string(f)))
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(cfg.Content)
			return err
		},
	}
	show.Flags().StringVar(&famFlag, "flavor", "mariadb", "the flavor the config is for (mariadb, mysql, postgres)")
	c.AddCommand(show)

	var replace bool
	var addFam string
	add := &cobra.Command{
		Use:   "add NAME FILE",
		Short: "Add FILE as config NAME (.cnf: MySQL family, .conf: PostgreSQL)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := configStore()
			if err != nil {
				return err
			}
			var fam config.Family
			if addFam != "" {
				f, err := build.ParseFlavor(addFam)
				if err != nil {
					return err
				}
				fam = config.FamilyOf(string(f))
			}
			cfg, err := s.Add(args[0], args[1], fam, replace)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added config %s (%s) as %s\n", cfg.ID(), cfg.Family, cfg.Source)
			return nil
		},
	}
	add.Flags().BoolVar(&replace, "replace", false, "overwrite your existing config of that name")
	add.Flags().StringVar(&addFam, "family", "", "mariadb, mysql or postgres, when the file's extension does not tell")
	c.AddCommand(add)
	return c
}
