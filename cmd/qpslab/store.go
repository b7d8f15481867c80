package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/store"
)

// newStoreCmd is qpslab store check.
func newStoreCmd() *cobra.Command {
	var o app.StoreCheckOptions
	check := jobCmd("check", "Check the results store for damage (SQLite's quick check; PostgreSQL's page "+
		"checksums), and say the way back", cobra.NoArgs, func(cmd *cobra.Command, e app.Env, _ []string) error {
		return app.StoreCheck(cmd.Context(), e, o)
	})
	check.Flags().BoolVar(&o.Reindex, "reindex", false, "rebuild the damaged indexes from the tables, where only "+
		"indexes are damaged (nothing is lost), and check again")
	check.Flags().StringVar(&o.Salvage, "salvage", "", "copy what still reads of a damaged SQLite store into a new "+
		"store at this file (the damaged one is only read)")
	c := &cobra.Command{Use: "store", Short: "Look after the results store: check it for damage"}
	c.AddCommand(check)
	return c
}

func addStoreFlag(root *cobra.Command) {
	root.PersistentFlags().String("store", os.Getenv("QPSLAB_STORE"),
		"results store: a SQLite file (default <home>/qpslab.db) or postgres://user@host/db (the password is never "+
			"stored); $QPSLAB_STORE")
}

// storeDSN is the --store flag of the command line cmd belongs to: passed
// on to what needs it, never kept in a global.
func storeDSN(cmd *cobra.Command) string {
	if f := cmd.Flag("store"); f != nil {
		return f.Value.String()
	}
	return os.Getenv("QPSLAB_STORE")
}

// env is the command's env: the home, its --store and its writers.
func env(cmd *cobra.Command) (app.Env, error) {
	h, err := home.Resolve()
	return app.Env{Home: h, Store: storeDSN(cmd), Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()}, err
}

// withStore runs f on the existing store of the home (or --store): none is
// made (store.OpenRead).
func withStore(cmd *cobra.Command, f func(*store.Store) error) error {
	e, err := env(cmd)
	if err != nil {
		return err
	}
	return e.WithStore(cmd.Context(), f)
}
