package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/curate"
	"github.com/qpslab/qpslab/internal/store"
)

// newRunsCmd is qpslab runs hide|unhide|delete RUN-ID...: internal/curate,
// as the API's admin endpoints do it.
func newRunsCmd() *cobra.Command {
	c := &cobra.Command{Use: "runs", Short: "Hide, unhide or delete stored runs by id, with an audit line of who and " +
		"when"}
	for _, a := range curate.Actions {
		c.AddCommand(&cobra.Command{Use: a.Name + " RUN-ID...", Short: a.Short, Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, ids []string) error {
				return withStore(cmd, func(st *store.Store) error {
					return curate.Command(cmd.Context(), st, a.Name, ids, cmd.OutOrStdout())
				})
			}})
	}
	return c
}
