package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/host"
)

func newDemoCmd() *cobra.Command {
	var rows int
	var secs float64
	var repeat int
	var html string
	c := &cobra.Command{
		Use:   "demo",
		Short: "The seeds' experiment in miniature: MariaDB 10.2.11 against 10.11, all 42 sysbench tests, compared",
		Long: `Runs, with qpslab's own commands:

  1. a summary of qpslab host check;
  2. qpslab builds fetch mariadb-10.2.11 (once; cached after);
  3. qpslab run sysbench with both builds and the same config ("demo", the
     shipped default), 1 table of --rows rows, all 42 tests with short
     windows, the builds interleaved (A B A B, --repeat);
  4. qpslab compare mariadb-10.2.11.demo mariadb-system.demo, with the group
     statistics, and the HTML report.

Results go to the store like any run's, under the labels
mariadb-10.2.11.demo and mariadb-system.demo; a second demo adds repeats.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rows < 1 || secs <= 0 || repeat < 1 {
				return fmt.Errorf("qpslab demo needs --rows ≥ 1, --secs > 0 and --repeat ≥ 1")
			}
			h, err := resolveHome()
			if err != nil {
				return err
			}
			// Each sub-command's root resets the --store flag's variable:
			// keep this command's value.
			dsn := storeDSN
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			step := func(s string) { fmt.Fprintf(errw, "\n== %s\n", s) }

			step("host check (qpslab host check shows it all)")
			hc, err := host.Inspect(host.Real)
			if err != nil {
				return err
			}
			vm := "bare metal"
			if hc.VM {
				vm = "a VM"
				if hc.Hypervisor != "" {
					vm += " (" + hc.Hypervisor + ")"
				}
			}
			fmt.Fprintf(out, "%s, %d CPUs, %.1f GB, kernel %s, %s, cpufreq driver %s, steal %.1f%% since boot\n",
				hc.CPUModel, hc.CPUs, float64(hc.MemKB)/1e6, hc.Kernel, vm, hc.Driver, hc.StealPct)
			for _, r := range hc.Risks {
				fmt.Fprintf(out, "  risk: %s: %s (fix: %s)\n", r.Name, r.Detail, r.Fix)
			}

			// The demo's config is the shipped default under its own name, so
			// its labels never mix with other runs of the default config.
			cs := config.Store{Dir: h.Configs()}
			def, err := cs.Get("default", config.MySQL)
			if err != nil {
				return err
			}
			tmp := filepath.Join(h.Root, "demo.cnf.tmp")
			if err := os.WriteFile(tmp, def.Content, 0o644); err != nil {
				return err
			}
			_, err = cs.Add("demo", tmp, config.MySQL, true)
			os.Remove(tmp)
			if err != nil {
				return err
			}

			if html == "" {
				html = filepath.Join(h.Root, "reports", "demo-"+time.Now().UTC().Format("20060102-150405")+".html")
			}
			if err := os.MkdirAll(filepath.Dir(html), 0o755); err != nil {
				return err
			}
			s := strconv.FormatFloat(secs, 'f', -1, 64)
			for _, args := range [][]string{
				{"builds", "fetch", "mariadb-10.2.11"},
				{"run", "sysbench", "--build", "mariadb-10.2.11", "--build", "mariadb-system", "--config", "demo",
					"--tables", "1", "--rows", strconv.Itoa(rows), "--threads", "1", "--repeat", strconv.Itoa(repeat),
					"--read-secs", s, "--write-secs", s, "--insert-secs", s, "--warmup", "0.5", "--postwrite-scale", "0", "--report-interval", "60"},
				{"compare", "mariadb-10.2.11.demo", "mariadb-system.demo", "--html", html},
			} {
				step("qpslab " + fmt.Sprint(args))
				sub := newRoot()
				sub.SetArgs(append(args, "--store", dsn))
				sub.SetOut(out)
				sub.SetErr(errw)
				if err := sub.ExecuteContext(cmd.Context()); err != nil {
					return err
				}
			}
			fmt.Fprintf(out, "\nThe HTML report: %s\n", html)
			return nil
		},
	}
	c.Flags().IntVar(&rows, "rows", 100_000, "rows in the table")
	c.Flags().Float64Var(&secs, "secs", 1, "seconds per test")
	c.Flags().IntVar(&repeat, "repeat", 2, "times the builds run, interleaved")
	c.Flags().StringVar(&html, "html", "", "the report file (default <home>/reports/demo-TIME.html)")
	return c
}
