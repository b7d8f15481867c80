package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/suite"
)

func newDemoCmd() *cobra.Command {
	var rows, repeat int
	var secs float64
	var html, tests string
	var verbose bool
	c := &cobra.Command{
		Use:   "demo",
		Short: "The seeds' experiment in miniature: MariaDB 10.2.11 against 10.11, all 42 sysbench tests, compared",
		Long: `Runs, on a machine where qpslab never ran as well as on one where it did:

  1. a summary of qpslab host check;
  2. the registry build mariadb-10.2.11, fetched once (cached after);
  3. the sysbench suite on mariadb-10.2.11 and mariadb-system with the same
     config ("demo", the shipped default under its own name), 1 table of
     --rows rows, all 42 tests with short windows, both servers up and each
     test's slices alternating between them (--repeat times), as qpslab run
     sysbench would;
  4. the comparison of mariadb-system.demo against mariadb-10.2.11.demo,
     led by the verdict (which tests changed beyond the noise, by how much,
     with their intervals), with the group statistics, and the HTML report.

Results go to the store like any run's, under the labels
mariadb-10.2.11.demo and mariadb-system.demo; a second demo adds repeats.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rows < 1 || !(secs > 0 && secs <= 3600) || repeat < 1 { // !(>): NaN too
				return fmt.Errorf("qpslab demo needs --rows ≥ 1, --secs > 0 (at most 3600) and --repeat ≥ 1")
			}
			h, err := resolveHome()
			if err != nil {
				return err
			}
			ctx, out, errw := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			step := func(s string) { fmt.Fprintf(errw, "\n== %s\n", s) }

			step("host check (qpslab host check shows it all)")
			hc, err := host.Inspect(host.Real)
			if err != nil {
				return err
			}
			report.HostSummary(out, hc)

			step("the builds: mariadb-10.2.11 from the registry (once), mariadb-system from Debian's packages")
			reg := build.Registry{Dir: h.Builds(), Cache: h.Cache}
			if _, err := reg.Fetch(ctx, "mariadb-10.2.11", build.FetchOptions{Log: errw}); err != nil {
				return err
			}
			// The demo's config is the shipped default under its own name (a
			// config based on default with nothing of its own), so its labels
			// never mix with other runs of the default config.
			cs := config.Store{Dir: h.Configs()}
			if _, err := cs.AddContent("demo", []byte("# qpslab: base=default\n# The demo's config: default's settings, under a name of its own.\n"), config.MySQL, true); err != nil {
				return err
			}

			step("qpslab run sysbench --build mariadb-10.2.11,mariadb-system --config demo (builds interleaved)")
			s, err := suite.Get("sysbench")
			if err != nil {
				return err
			}
			sec := strconv.FormatFloat(secs, 'f', -1, 64)
			v := suite.Defaults(plan.Common, s.Params())
			for _, kv := range [][2]string{
				{"build", "mariadb-10.2.11,mariadb-system"}, {"config", "demo"}, {"tables", "1"}, {"rows", strconv.Itoa(rows)},
				{"threads", "1"}, {"repeat", strconv.Itoa(repeat)}, {"read-secs", sec}, {"write-secs", sec}, {"insert-secs", sec},
				{"warmup", "0.5"}, {"postwrite-scale", "0"}, {"report-interval", "60"}, {"tests", tests},
			} {
				v = v.With(kv[0], kv[1])
			}
			p, err := plan.New(ctx, h, s, v)
			if err != nil {
				return err
			}
			outFile := filepath.Join(h.Results(), "demo-"+time.Now().UTC().Format("20060102-150405")+".json")
			if err := home.Ensure(h.Results()); err != nil {
				return err
			}
			if _, err := runPlan(cmd, h, p, outFile, verbose); err != nil {
				return err
			}

			step("qpslab compare mariadb-10.2.11.demo mariadb-system.demo")
			st, err := openStore(cmd, h)
			if err != nil {
				return err
			}
			defer st.Close()
			cmp, sets, err := selector.Selection{Suite: s.Name()}.Compare(cmd.Context(), st, []string{"mariadb-10.2.11.demo", "mariadb-system.demo"}, "", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := report.Compare(out, cmp, "text", report.IsTTY(out)); err != nil {
				return err
			}
			if html == "" {
				html = filepath.Join(h.Reports(), "demo-"+time.Now().UTC().Format("20060102-150405")+".html")
			}
			if err := home.Ensure(filepath.Dir(html)); err != nil {
				return err
			}
			if err := report.HTMLReport(cmd.ErrOrStderr(), html, sets, cmp, selector.Content(cmd.Context(), st)); err != nil {
				return err
			}
			fmt.Fprintf(out, "\nThe HTML report: %s\n", html)
			return nil
		},
	}
	c.Flags().IntVar(&rows, "rows", 100_000, "rows in the table")
	c.Flags().Float64Var(&secs, "secs", 1, "seconds per test")
	c.Flags().IntVar(&repeat, "repeat", 2, "repeats of every test on both builds (each one's slices alternating)")
	c.Flags().StringVar(&html, "html", "", "the report file (default <home>/reports/demo-TIME.html)")
	c.Flags().StringVar(&tests, "tests", "", "only these tests (globs, as qpslab run sysbench --tests); default all 42")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "print what happens and each run's figures as it ends")
	return c
}
