package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/serve"
	"github.com/qpslab/qpslab/internal/store"
)

func newServeCmd() *cobra.Command {
	var o serve.Command
	c := jobCmd("serve", "Serve the results: a dashboard of suites, history with change points, comparisons, runs and hosts; an API to post results to; webhook alerts",
		cobra.NoArgs, func(cmd *cobra.Command, e jobs.Env, _ []string) error {
			o.WebhookGiven, o.SettingsGiven = cmd.Flags().Changed("webhook"), cmd.Flags().Changed("settings")
			return o.Run(cmd.Context(), e.Home, e.Store, e.Err)
		})
	f := c.Flags()
	f.StringVar(&o.Listen.Addr, "listen", "127.0.0.1:8080", "host:port to listen on (port 0: any free port)")
	f.StringVar(&o.Listen.CertFile, "tls-cert", "", "TLS certificate file (PEM), with --tls-key")
	f.StringVar(&o.Listen.KeyFile, "tls-key", "", "TLS private key file (PEM)")
	f.BoolVar(&o.Listen.Insecure, "insecure", false, "allow plain HTTP on an address other hosts can reach (behind a TLS proxy)")
	f.StringVar(&o.Read, "read", "public", "public (anyone may read) or token (pages and reads need a token with the read scope)")
	// Not the flag's default: help would print the address, a secret.
	f.StringVar(&o.Webhook, "webhook", "", "post alerts to this URL (Slack, Mattermost, or any JSON receiver); default $QPSLAB_WEBHOOK")
	f.Float64Var(&o.Threshold, "alert-threshold", 0.05, "the smallest relative change of a regression that alerts (0.05 = 5 %)")
	f.StringSliceVar(&o.Metrics, "alert-metric", []string{"qps"}, "the metrics whose regressions alert")
	f.BoolVar(&o.AlertExisting, "alert-existing", false, "the first time alerts run on this store, post the regressions already stored too (default: only those new results bring)")
	f.StringVar(&o.PublicURL, "public-url", "", "how the dashboard is reached, for the links in alerts (default the listen address)")
	f.StringVar(&o.Settings, "settings", "", "change-point settings (default <home>/detect.yaml, if present; see qpslab detect)")
	f.StringVar(&o.MaxBody, "max-body", "64MiB", "the largest request body accepted (a tarball may unpack to 4 times as much)")
	f.DurationVar(&o.Poll, "poll", 10*time.Second, "how often to look for results others stored (qpslab run, import)")
	return c
}

func newTokensCmd() *cobra.Command {
	c := &cobra.Command{Use: "tokens", Short: "Manage the API tokens of qpslab serve: create, list, revoke"}
	var scopes []string
	sub := func(use, short string, args cobra.PositionalArgs) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: args, RunE: func(cmd *cobra.Command, a []string) error {
			open := func() (*store.Store, error) { return homeStore(cmd) }
			return serve.Tokens(cmd.Context(), open, cmd.Name(), a, scopes, cmd.OutOrStdout(), cmd.ErrOrStderr())
		}}
	}
	create := sub("create NAME --scope read,ingest", "Make a token, and print it once", cobra.ExactArgs(1))
	create.Flags().StringSliceVar(&scopes, "scope", nil, "what the token may do: "+strings.Join(serve.Scopes, ", "))
	c.AddCommand(create, sub("list", "List the tokens (never the tokens themselves: only their ids)", cobra.NoArgs),
		sub("revoke ID|NAME", "Revoke a token: it is refused from then on", cobra.ExactArgs(1)))
	return c
}
