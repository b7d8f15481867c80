package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/suite"
)

func newAgentCmd() *cobra.Command {
	var o jobs.AgentOptions
	c := jobCmd("agent --store postgres://… [--labels L,…] [--name N]", cobra.NoArgs,
		func(cmd *cobra.Command, e jobs.Env, _ []string) error { return jobs.Agent(cmd.Context(), e, o) })
	c.Flags().StringVar(&o.Name, "name", "", "")
	c.Flags().StringSliceVar(&o.Labels, "labels", nil, "")
	c.Flags().Var(duration.Var(&o.Heartbeat, 10*time.Second, false), "heartbeat", "")
	c.Flags().StringVar(&o.OnTerm, "on-term", "finish", "")
	c.Flags().Var(duration.Var(&o.RescueAfter, time.Minute, false), "rescue-after", "")
	c.Flags().StringSliceVar(&o.AllowFiles, "allow-server-file", nil, "")
	return c
}

func newFleetCmd() *cobra.Command {
	c := &cobra.Command{Use: "fleet"}
	var format string
	status := jobCmd("status [JOB…]", cobra.ArbitraryArgs, func(cmd *cobra.Command, e jobs.Env, args []string) error {
		return jobs.Status(cmd.Context(), e, args, format)
	})
	report.FormatFlag(status.Flags(), &format, "text", "json")
	hosts := jobCmd("hosts", cobra.NoArgs,
		func(cmd *cobra.Command, e jobs.Env, _ []string) error { return jobs.Hosts(cmd.Context(), e, format) })
	report.FormatFlag(hosts.Flags(), &format, "text", "json")
	c.AddCommand(newFleetSubmitCmd(), status, hosts,
		jobCmd("cancel JOB…", cobra.MinimumNArgs(1), func(cmd *cobra.Command, e jobs.Env, args []string) error {
			return jobs.Cancel(cmd.Context(), e, args)
		}),
		jobCmd("retry JOB…", cobra.MinimumNArgs(1), func(cmd *cobra.Command, e jobs.Env, args []string) error {
			return jobs.Retry(cmd.Context(), e, args)
		}))
	return c
}

func submitFlags(c *cobra.Command, o *jobs.SubmitOptions) {
	c.Flags().StringSliceVar(&o.Hosts, "hosts", nil, "")
	c.Flags().Var(duration.Var(&o.Timeout, 0, true), "timeout", "")
	c.Flags().IntVar(&o.Attempts, "attempts", 3, "")
	c.Flags().IntVar(&o.LoadHosts, "load-hosts", 0, "")
	c.Flags().Var(duration.Var(&o.StartWithin, 0, true), "start-within", "")
}

func newFleetSubmitCmd() *cobra.Command {
	var o jobs.SubmitOptions
	var planPath string
	c := jobCmd("submit SUITE [plan flags] --hosts NAME|LABEL,… | submit --plan FILE", cobra.ArbitraryArgs,
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			return jobs.SubmitFile(cmd.Context(), e, planPath, args, o, cmd.Flags().Changed)
		})
	c.Long = help("fleet-submit-SUITE") + "\n\n" + help("fleet-submit-plan")
	submitFlags(c, &o)
	c.Flags().StringVar(&planPath, "plan", "", "")
	for _, s := range suite.All() {
		var o jobs.SubmitOptions
		sc, given := suiteCmd(s, " --build B [--config C] --hosts NAME|LABEL,…",
			"Queue a "+s.Name()+" plan for each host: "+s.Summary(), help("fleet-submit-SUITE"))
		submitFlags(sc, &o)
		sc.RunE = withEnv(func(cmd *cobra.Command, e jobs.Env, _ []string) error {
			o.AttemptsGiven = cmd.Flags().Changed("attempts")
			return jobs.Submit(cmd.Context(), e, s, given(), o)
		})
		c.AddCommand(sc)
	}
	return c
}
