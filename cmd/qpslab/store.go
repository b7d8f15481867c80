package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/store"
)

func addStoreFlag(root *cobra.Command) {
	root.PersistentFlags().String("store", os.Getenv("QPSLAB_STORE"),
		"results store: a SQLite file (default <home>/qpslab.db) or postgres://user@host/db (the password is never stored); $QPSLAB_STORE")
}

// storeDSN is the --store flag of the command line cmd belongs to: passed
// on to what needs it, never kept in a global.
func storeDSN(cmd *cobra.Command) string {
	if f := cmd.Flag("store"); f != nil {
		return f.Value.String()
	}
	return os.Getenv("QPSLAB_STORE")
}

func openStore(cmd *cobra.Command, h home.Home) (*store.Store, error) {
	return store.Open(cmd.Context(), storeDSN(cmd), h.StoreFile())
}

// readStore opens the store of the qpslab home (or --store) for a command
// that only reads: it creates nothing (store.ErrNoStore when there is none).
func readStore(cmd *cobra.Command) (*store.Store, error) {
	h, err := resolveHome()
	if err != nil {
		return nil, err
	}
	return store.OpenRead(cmd.Context(), storeDSN(cmd), h.StoreFile())
}

// homeStore opens the store of the qpslab home (or --store), creating it.
func homeStore(cmd *cobra.Command) (*store.Store, error) {
	h, err := resolveHome()
	if err != nil {
		return nil, err
	}
	return openStore(cmd, h)
}
