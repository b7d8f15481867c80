package main

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/serve"
)

func newServeCmd() *cobra.Command {
	var l serve.Listen
	var read, webhook, publicURL, settingsFile, maxBody string
	var threshold float64
	var alertExisting bool
	var metrics []string
	var poll time.Duration
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the results: a dashboard of suites, history with change points, comparisons, runs and hosts; an API to post results to; webhook alerts",
		Long: `Serve the store (the home's, or --store postgres://… for a shared one) over
HTTP: each suite's tests with their latest relative values; each test's
history per host, config and thread count with its change points marked at
the build where they arrived (qpslab detect's analysis and settings); a
compare page for any labels (qpslab compare's tables, group statistics and
colours); runs with their status, host, config diff and per-second
timelines; a page per host with its risks. Links are stable: share them.

POST /api/v1/results imports results as qpslab import does (qpslab's results
JSON, sysbench output, a tarball of a reference harness folder), with a
token of the ingest scope (qpslab tokens create). GET /api/v1 lists the JSON
endpoints (docs/serve.md). Reads are public unless --read token.

With --webhook (or $QPSLAB_WEBHOOK), a regression change point that new
results bring, of a --alert-metric with a magnitude of at least
--alert-threshold, is posted once (JSON with a "text" line: Slack's and
Mattermost's incoming webhooks take it as it is). The regressions already
stored when alerts first run on a store are taken as known, unless
--alert-existing.

Listening on an address other hosts reach needs TLS (--tls-cert, --tls-key),
or --insecure behind a TLS proxy.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := l.Check(); err != nil {
				return err
			}
			if read != "public" && read != "token" {
				return fmt.Errorf("--read %s: use public (anyone may read) or token (reads need a token with the read scope)", read)
			}
			if !cmd.Flags().Changed("webhook") {
				webhook = os.Getenv("QPSLAB_WEBHOOK")
			}
			if webhook != "" {
				u, err := url.Parse(webhook)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return fmt.Errorf("--webhook: give the http(s) URL of an incoming webhook (Slack, Mattermost, or any that takes JSON)")
				}
			}
			if !(threshold > 0 && threshold < 10) {
				return fmt.Errorf("--alert-threshold %g: give the smallest relative change that alerts, e.g. 0.05 for 5 %%", threshold)
			}
			limit, err := humanize.ParseBytes(maxBody)
			if err != nil || limit < 1024 || limit > 1<<40 {
				return fmt.Errorf("--max-body %s: give a size from 1KiB to 1TiB, e.g. 64MiB", maxBody)
			}
			if poll < time.Second {
				return fmt.Errorf("--poll %s: give 1s or more", poll)
			}
			if publicURL != "" {
				if u, err := url.Parse(publicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return fmt.Errorf("--public-url %s: give how the dashboard is reached, e.g. https://bench.example.com", publicURL)
				}
			}
			h, err := resolveHome()
			if err != nil {
				return err
			}
			if settingsFile == "" {
				settingsFile = h.DetectSettings()
			}
			settings, err := analysis.LoadDetectSettings(settingsFile, cmd.Flags().Changed("settings"))
			if err != nil {
				return err
			}
			base, err := settings.Resolve(analysis.Given{}, settingsFile)
			if err != nil {
				return err
			}
			for _, m := range metrics {
				if _, err := result.MetricNamed(m); err != nil {
					return fmt.Errorf("--alert-metric %s: use one of %s", m, result.MetricNames())
				}
			}
			st, err := openStore(cmd, h)
			if err != nil {
				return err
			}
			defer st.Close()
			errw := cmd.ErrOrStderr()
			srv, err := serve.New(serve.Options{
				Store: st, Settings: settings, Detect: base, PublicRead: read == "public",
				MaxBody: int64(limit), Webhook: webhook, AlertThreshold: threshold, AlertMetrics: metrics, AlertExisting: alertExisting,
				PublicURL: publicURL, Poll: poll, Log: errw, Secure: l.CertFile != "",
			})
			if err != nil {
				return err
			}
			return serve.ListenAndServe(cmd.Context(), srv, l, func(addr string) {
				reads := "reads are public"
				if read == "token" {
					reads = "reads need a token with the read scope"
				}
				alerts := "no webhook"
				if webhook != "" {
					alerts = fmt.Sprintf("alerts of %s regressions of %g%% or more to the webhook", strings.Join(metrics, ","), 100*threshold)
				}
				fmt.Fprintf(errw, "qpslab serve: %s (listening on %s) over %s; %s; %s\n", srv.PublicURL(), addr, st.Where(), reads, alerts)
			})
		},
	}
	c.Flags().StringVar(&l.Addr, "listen", "127.0.0.1:8080", "host:port to listen on (port 0: any free port)")
	c.Flags().StringVar(&l.CertFile, "tls-cert", "", "TLS certificate file (PEM), with --tls-key")
	c.Flags().StringVar(&l.KeyFile, "tls-key", "", "TLS private key file (PEM)")
	c.Flags().BoolVar(&l.Insecure, "insecure", false, "allow plain HTTP on an address other hosts can reach (behind a TLS proxy)")
	c.Flags().StringVar(&read, "read", "public", "public (anyone may read) or token (pages and reads need a token with the read scope)")
	// Not the flag's default: help would print the address, a secret.
	c.Flags().StringVar(&webhook, "webhook", "", "post alerts to this URL (Slack, Mattermost, or any JSON receiver); default $QPSLAB_WEBHOOK")
	c.Flags().Float64Var(&threshold, "alert-threshold", 0.05, "the smallest relative change of a regression that alerts (0.05 = 5 %)")
	c.Flags().StringSliceVar(&metrics, "alert-metric", []string{"qps"}, "the metrics whose regressions alert")
	c.Flags().BoolVar(&alertExisting, "alert-existing", false, "the first time alerts run on this store, post the regressions already stored too (default: only those new results bring)")
	c.Flags().StringVar(&publicURL, "public-url", "", "how the dashboard is reached, for the links in alerts (default the listen address)")
	c.Flags().StringVar(&settingsFile, "settings", "", "change-point settings (default <home>/detect.yaml, if present; see qpslab detect)")
	c.Flags().StringVar(&maxBody, "max-body", "64MiB", "the largest request body accepted (a tarball may unpack to 4 times as much)")
	c.Flags().DurationVar(&poll, "poll", 10*time.Second, "how often to look for results others stored (qpslab run, import)")
	return c
}

func newTokensCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "tokens",
		Short: "Manage the API tokens of qpslab serve: create, list, revoke",
		Long: `Tokens let CI post results to qpslab serve (scope ingest) and read a dashboard
whose reads are not public (scope read). A token is shown once, when it is
created; the store keeps only its hash.`,
	}
	var scopes []string
	create := &cobra.Command{
		Use:   "create NAME --scope read,ingest",
		Short: "Make a token, and print it once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := serve.CheckScopes(scopes); err != nil {
				return err
			}
			st, err := homeStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			tok, t, err := serve.CreateToken(cmd.Context(), st, args[0], scopes, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			fmt.Fprintf(cmd.ErrOrStderr(), "token %s (%s, scopes %s) created in %s: it is shown this once; keep it in your CI's secrets\n", t.ID, t.Name, strings.Join(t.Scopes, ","), st.Where())
			return nil
		},
	}
	create.Flags().StringSliceVar(&scopes, "scope", nil, "what the token may do: "+strings.Join(serve.Scopes, ", "))
	list := &cobra.Command{
		Use:   "list",
		Short: "List the tokens (never the tokens themselves: only their ids)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := homeStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			ts, err := st.Tokens(cmd.Context())
			if err != nil {
				return err
			}
			return report.Tokens(cmd.OutOrStdout(), ts)
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID|NAME",
		Short: "Revoke a token: it is refused from then on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := homeStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			t, err := st.RevokeToken(cmd.Context(), args[0], time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "token %s (%s) revoked\n", t.ID, t.Name)
			return nil
		},
	}
	c.AddCommand(create, list, revoke)
	return c
}
