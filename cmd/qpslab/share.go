package main

// Dashboard and fleet: serve, tokens, agent and fleet.

import (
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/bisect"
	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/serve"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/spf13/cobra"
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

func newAgentCmd() *cobra.Command {
	var o app.AgentOptions
	c := jobCmd("agent --store postgres://… [--labels L,…] [--name N]", "Work this host's benchmark jobs from the "+
		"shared store, one at a time (docs/fleet.md)", cobra.NoArgs,
		func(cmd *cobra.Command, e app.Env, _ []string) error { return app.Agent(cmd.Context(), e, o) })
	c.Flags().StringVar(&o.Name, "name", "", "this host's name in the fleet (default: the hostname, in lower case); "+
		"a name other than the hostname makes it a host of its own")
	c.Flags().StringSliceVar(&o.Labels, "labels", nil, "labels to submit jobs by (qpslab fleet submit --hosts "+
		"LABEL), e.g. small,amd")
	c.Flags().Var(duration.Var(&o.Heartbeat, 10*time.Second, false), "heartbeat", "heartbeat interval; a host with "+
		"no heartbeat for three is lost")
	c.Flags().StringVar(&o.OnTerm, "on-term", "finish", "on SIGTERM or SIGINT: finish the job in progress first (a "+
		"second signal aborts it), or abort it")
	c.Flags().Var(duration.Var(&o.RescueAfter, time.Minute, false), "rescue-after", "River's rescuer, on this agent "+
		"when it leads: the least time before the job of an agent that vanished is retried (its timeout is the other "+
		"bound)")
	c.Flags().StringSliceVar(&o.AllowFiles, "allow-server-file", nil, "let this host's servers read, write or run "+
		"this file, folder or command outside their sandboxes when a job's config or --set names it (and the job "+
		"allows it too); refused otherwise (repeat for more)")
	return c
}

func newFleetCmd() *cobra.Command {
	c := &cobra.Command{Use: "fleet", Short: "Queue plans as jobs for benchmark hosts and follow them (docs/fleet.md)"}
	var format string
	status := jobCmd("status [JOB…]", "The hosts (state, last heartbeat) and the jobs (state, attempts, runs, "+
		"errors); one job in full", cobra.ArbitraryArgs, func(cmd *cobra.Command, e app.Env, args []string) error {
		return app.Status(cmd.Context(), e, args, format)
	})
	report.FormatFlag(status.Flags(), &format, "text", "json")
	hosts := jobCmd("hosts", "The hosts whose agents registered: labels, state (idle, working, stopping, stopped, "+
		"lost), heartbeat, machine", cobra.NoArgs,
		func(cmd *cobra.Command, e app.Env, _ []string) error { return app.Hosts(cmd.Context(), e, format) })
	report.FormatFlag(hosts.Flags(), &format, "text", "json")
	c.AddCommand(newFleetSubmitCmd(), status, hosts,
		jobCmd("cancel JOB…", "Cancel jobs: a queued one never runs, a running one is stopped (its run stored "+
			"aborted) and not retried", cobra.MinimumNArgs(1),
			func(cmd *cobra.Command, e app.Env, args []string) error {
				return app.Cancel(cmd.Context(), e, args)
			}),
		jobCmd("retry JOB…", "Run cancelled or failed jobs again, now, as their next attempt (the runs of earlier "+
			"attempts stop counting)", cobra.MinimumNArgs(1),
			func(cmd *cobra.Command, e app.Env, args []string) error {
				return app.Retry(cmd.Context(), e, args)
			}))
	return c
}

func submitFlags(c *cobra.Command, o *app.SubmitOptions) {
	c.Flags().StringSliceVar(&o.Hosts, "hosts", nil, "the hosts to run on: agent names and labels (qpslab fleet "+
		"hosts lists them); one job per host")
	c.Flags().Var(duration.Var(&o.Timeout, 0, true), "timeout", "how long one attempt may run; a job whose agent "+
		"vanished is retried once it has passed (default: twice the plan's planned time, and 10 minutes per server "+
		"it starts)")
	c.Flags().IntVar(&o.Attempts, "attempts", 3, "how many times a job is tried (after a failure, or when its agent "+
		"vanished)")
	c.Flags().IntVar(&o.LoadHosts, "load-hosts", 0, "a spread run: the plan on its --target with its load from this "+
		"many of the --hosts at once, each running its share of the threads, merged into one run per test (one job "+
		"per host, tried once)")
	c.Flags().Var(duration.Var(&o.StartWithin, 0, true), "start-within", "with --load-hosts: how long the hosts have "+
		"to claim their parts; a part not claimed by then fails the spread run whole (default 5m)")
}

func newFleetSubmitCmd() *cobra.Command {
	var o app.SubmitOptions
	var planPath string
	c := jobCmd("submit SUITE [plan flags] --hosts NAME|LABEL,… | submit --plan FILE",
		"Queue a plan (qpslab run's flags) as one job per host", cobra.ArbitraryArgs,
		func(cmd *cobra.Command, e app.Env, args []string) error {
			return app.SubmitFile(cmd.Context(), e, planPath, args, o, cmd.Flags().Changed)
		})
	c.Long = help("fleet-submit-SUITE") + "\n\n" + help("fleet-submit-plan")
	submitFlags(c, &o)
	c.Flags().StringVar(&planPath, "plan", "", "a plan file: suite, hosts and parameters (YAML)")
	for _, s := range suite.All() {
		var o app.SubmitOptions
		sc, given := suiteCmd(s, " --build B [--config C] --hosts NAME|LABEL,…",
			"Queue a "+s.Name()+" plan for each host: "+s.Summary(), help("fleet-submit-SUITE"))
		submitFlags(sc, &o)
		sc.RunE = withEnv(func(cmd *cobra.Command, e app.Env, _ []string) error {
			o.AttemptsGiven = cmd.Flags().Changed("attempts")
			return app.Submit(cmd.Context(), e, s, given(), o)
		})
		c.AddCommand(sc)
	}
	return c
}
