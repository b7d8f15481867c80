package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/serve"
)

func newServeCmd() *cobra.Command {
	var o serve.Command
	c := jobCmd("serve", cobra.NoArgs, func(cmd *cobra.Command, e jobs.Env, _ []string) error {
		o.WebhookGiven, o.SettingsGiven = cmd.Flags().Changed("webhook"), cmd.Flags().Changed("settings")
		return o.Run(cmd.Context(), e.Home, e.Store, e.Err)
	})
	c.Flags().StringVar(&o.Listen.Addr, "listen", "127.0.0.1:8080", "")
	c.Flags().StringVar(&o.Listen.CertFile, "tls-cert", "", "")
	c.Flags().StringVar(&o.Listen.KeyFile, "tls-key", "", "")
	c.Flags().BoolVar(&o.Listen.Insecure, "insecure", false, "")
	c.Flags().StringVar(&o.Read, "read", "public", "")
	c.Flags().StringVar(&o.Triage, "triage", "token", "")
	c.Flags().StringVar(&o.Webhook, "webhook", "", "") // no default: help would print the address, a secret
	c.Flags().Float64Var(&o.Threshold, "alert-threshold", 0.05, "")
	c.Flags().StringSliceVar(&o.Metrics, "alert-metric", []string{"qps"}, "")
	c.Flags().BoolVar(&o.AlertExisting, "alert-existing", false, "")
	c.Flags().StringVar(&o.PublicURL, "public-url", "", "")
	c.Flags().StringVar(&o.Settings, "settings", "", "")
	c.Flags().StringVar(&o.MaxBody, "max-body", "64MiB", "")
	c.Flags().Var(duration.Var(&o.Poll, 10*time.Second, false), "poll", "")
	c.Flags().StringVar(&o.TrustedProxy, "trusted-proxy", "", "")
	c.Flags().StringArrayVar(&o.BisectSrc, "bisect-src", nil, "")
	c.Flags().StringSliceVar(&o.AllowedHosts, "allowed-host", nil, "")
	return c
}

func newTokensCmd() *cobra.Command {
	c := &cobra.Command{Use: "tokens"}
	var scopes []string
	do := func(cmd *cobra.Command, e jobs.Env, args []string) error {
		return serve.Tokens(cmd.Context(), e.Home, e.Store, cmd.Name(), args, scopes, e.Out, e.Err)
	}
	create := jobCmd("create NAME --scope read,ingest", cobra.ExactArgs(1), do)
	create.Flags().StringSliceVar(&scopes, "scope", nil, "what the token may do: "+strings.Join(serve.Scopes, ", "))
	c.AddCommand(create, jobCmd("list", cobra.NoArgs, do), jobCmd("revoke ID|NAME", cobra.ExactArgs(1), do))
	return c
}
