package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/bisect"
	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/serve"
)

func newServeCmd() *cobra.Command {
	var o serve.Command
	c := jobCmd("serve", "Serve the results: a dashboard of suites, history with change points, comparisons, runs "+
		"and hosts; an API to post results to; webhook alerts", cobra.NoArgs,
		func(cmd *cobra.Command, e app.Env, _ []string) error {
			o.WebhookGiven, o.SettingsGiven = cmd.Flags().Changed("webhook"), cmd.Flags().Changed("settings")
			o.Bisect = &bisect.Dashboard{}
			return o.Run(cmd.Context(), e.Home, e.Store, e.Err)
		})
	c.Flags().StringVar(&o.Listen.Addr, "listen", "127.0.0.1:8080", "host:port to listen on (port 0: any free port)")
	c.Flags().StringVar(&o.Listen.CertFile, "tls-cert", "", "TLS certificate file (PEM), with --tls-key")
	c.Flags().StringVar(&o.Listen.KeyFile, "tls-key", "", "TLS private key file (PEM)")
	c.Flags().BoolVar(&o.Listen.Insecure, "insecure", false, "allow plain HTTP on an address other hosts can reach "+
		"(behind a TLS proxy)")
	c.Flags().StringVar(&o.Read, "read", "public", "public (anyone may read) or token (pages and reads need a token "+
		"with the read scope)")
	c.Flags().StringVar(&o.Triage, "triage", "token", "token (setting a regression's triage state needs a token with "+
		"the triage scope) or public (anyone who may read may)")
	c.Flags().StringVar(&o.Webhook, "webhook", "", "post alerts to this URL (Slack, Mattermost, or any JSON "+
		"receiver); default $QPSLAB_WEBHOOK") // no default: help would print the address, a secret
	c.Flags().Float64Var(&o.Threshold, "alert-threshold", 0.05, "the smallest relative change of a regression that "+
		"alerts (0.05 = 5 %)")
	c.Flags().StringSliceVar(&o.Metrics, "alert-metric", []string{"qps"}, "the metrics whose regressions alert")
	c.Flags().BoolVar(&o.AlertExisting, "alert-existing", false, "the first time alerts run on this store, post the "+
		"regressions already stored too (default: only those new results bring)")
	c.Flags().StringVar(&o.PublicURL, "public-url", "", "how the dashboard is reached, for the links in alerts "+
		"(default the listen address), and the name it answers to; https://… makes its cookies Secure and sends "+
		"Strict-Transport-Security")
	c.Flags().StringVar(&o.Settings, "settings", "", "change-point settings (default <home>/detect.yaml, if present; "+
		"see qpslab detect)")
	c.Flags().StringVar(&o.MaxBody, "max-body", "64MiB", "the largest request body accepted (a tarball may unpack to "+
		"4 times as much)")
	c.Flags().Var(duration.Var(&o.Poll, 10*time.Second, false), "poll", "how often to look for results others stored "+
		"(qpslab run, import)")
	c.Flags().StringVar(&o.TrustedProxy, "trusted-proxy", "", "CIDR[,CIDR]: proxies in front whose X-Forwarded-For "+
		"names the client (its rightmost address not of these networks), and whose X-Forwarded-Proto: https makes "+
		"cookies Secure; without it the headers are ignored")
	c.Flags().StringArrayVar(&o.BisectSrc, "bisect-src", nil, "a git checkout the builds were compiled from "+
		"(repeatable): an attention entry whose commits it holds can be bisected from the page")
	c.Flags().StringSliceVar(&o.AllowedHosts, "allowed-host", nil, "a name the dashboard answers to besides "+
		"--public-url's host (or, without it, the listen host) and localhost, 127.0.0.1 and ::1 (repeatable); a "+
		"request for any other gets 421 Misdirected Request")
	return c
}

func newTokensCmd() *cobra.Command {
	c := &cobra.Command{Use: "tokens", Short: "Manage the API tokens of qpslab serve: create, list, revoke"}
	var scopes []string
	do := func(cmd *cobra.Command, e app.Env, args []string) error {
		return serve.Tokens(cmd.Context(), e.Home, e.Store, cmd.Name(), args, scopes, e.Out, e.Err)
	}
	create := jobCmd("create NAME --scope read,ingest", "Make a token, and print it once", cobra.ExactArgs(1), do)
	create.Flags().StringSliceVar(&scopes, "scope", nil, "what the token may do: "+strings.Join(serve.Scopes, ", "))
	c.AddCommand(create, jobCmd("list", "List the tokens (never the tokens themselves: only their ids)", cobra.NoArgs,
		do), jobCmd("revoke ID|NAME", "Revoke "+
		"a token: it is refused from then on, and its login sessions end", cobra.ExactArgs(1), do))
	return c
}
