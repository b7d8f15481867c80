package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
)

// SetHosts writes, under a comparison of labels across hosts
// (LABEL@HOST, or labels a plan measured in host states of their own:
// qpslab run --boost), each column's host: its id and its fingerprint in
// short (the machine and what sets its speed), and where a column's host
// differs from the base's, in what (host.Differences), so that the table
// says what the hosts are. hostID computes a stored fingerprint's id.
// Nothing when every column ran on the base's host and none names one.
func SetHosts(w io.Writer, sets []analysis.Set, hostID func(json.RawMessage) (string, error)) {
	Doc{Blocks: hostBlocks(sets, hostID)}.Write(w, "text", false)
}

// hostBlocks are SetHosts' lines, for a doc to end with.
func hostBlocks(sets []analysis.Set, hostID func(json.RawMessage) (string, error)) []Block {
	named := false
	latest := make([]json.RawMessage, len(sets)) // each column's latest run's fingerprint
	for i, s := range sets {
		named = named || strings.Contains(s.Label, "@")
		if n := len(s.Runs); n > 0 {
			latest[i] = s.Runs[n-1].Host
		}
	}
	var differ []string
	for i := 1; i < len(sets); i++ {
		if ds, err := host.Differences(latest[0], latest[i]); err == nil && len(ds) > 0 {
			var each []string
			for _, d := range ds {
				each = append(each, d.String())
			}
			differ = append(differ, fmt.Sprintf("  col-%d's host differs from the base's in %s", i, strings.Join(each, ", ")))
		}
	}
	if !named && len(differ) == 0 {
		return storageBlocks(sets)
	}
	var d Doc
	d.Gap()
	d.Sayf("Hosts (the fingerprint of each column's runs; qpslab report --html shows them whole)")
	for i, s := range sets {
		col := "base"
		if i > 0 {
			col = fmt.Sprintf("col-%d", i)
		}
		var seen []string
		for k := len(s.Runs) - 1; k >= 0; k-- { // the latest run's first
			fp := s.Runs[k].Host
			id, err := hostID(fp)
			if err != nil || len(fp) == 0 {
				id = "unknown"
			}
			if contains(seen, id) {
				continue
			}
			seen = append(seen, id)
			d.Sayf("  %s %s: host %s: %s", col, s.Label, id, fingerprintLine(fp))
		}
	}
	for _, l := range differ {
		d.Sayf("%s", l)
	}
	return d.Blocks
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// fingerprintLine is a fingerprint in one line.
func fingerprintLine(fp json.RawMessage) string {
	var c host.Check
	if len(fp) == 0 || json.Unmarshal(fp, &c) != nil {
		return "no fingerprint (imported results)"
	}
	vm := "bare metal"
	if c.VM {
		vm = "VM"
		if c.Hypervisor != "" {
			vm += " (" + c.Hypervisor + ")"
		}
	}
	govs := map[string]bool{}
	var gl []string
	for _, p := range c.Policies {
		if p.Governor != "" && !govs[p.Governor] {
			govs[p.Governor] = true
			gl = append(gl, p.Governor)
		}
	}
	gov := "none"
	if len(gl) > 0 {
		gov = strings.Join(gl, "/")
	}
	boost := "-"
	switch {
	case c.Boost != nil:
		boost = map[bool]string{true: "on", false: "off"}[*c.Boost]
	case c.NoTurbo != nil:
		boost = map[bool]string{true: "off", false: "on"}[*c.NoTurbo]
	}
	smt := c.SMTControl
	if smt == "" {
		smt = "-"
	}
	agent := ""
	if c.Agent != "" {
		agent = ", fleet agent " + c.Agent
	}
	disk := ""
	if d := storageLine(c.Storage); d != "" {
		disk = ", " + d
	}
	return fmt.Sprintf("%s, %d CPUs, %.1f GB, kernel %s, %s, cpufreq %s, governor %s, boost %s, SMT %s%s%s",
		strings.Join(strings.Fields(c.CPUModel), " "), c.CPUs, float64(c.MemKB)/1e6, c.Kernel, vm, c.Driver, gov, boost, smt, disk, agent)
}

// storageLine is the datadirs' disk in short: the device whose
// max_sectors_kb is the smallest under them (the largest request that
// reaches every disk whole), its read-ahead, and the memory a buffered
// read may be served from; "" where the fingerprint has no storage.
func storageLine(st *host.Storage) string {
	d, ok := st.SmallestMaxSectors()
	if !ok {
		return ""
	}
	return fmt.Sprintf("datadir disk %s max_sectors_kb %d, read_ahead_kb %d", d.Name, d.MaxSectorsKB, d.ReadAheadKB)
}

// storageBlocks is, under a comparison of runs whose disk's request sizes
// were measured (db_bench's: rareq-sz), the datadirs' disk of each host:
// its max_sectors_kb beside the results it explains (RocksDB issue
// 12038), and the host's memory, which bounds what buffered reads the
// page cache serves. Nothing for other runs.
func storageBlocks(sets []analysis.Set) []Block {
	rq, ok := result.Lookup("rareq-sz")
	if !ok {
		return nil
	}
	var lines, seen []string
	for _, s := range sets {
		for k := len(s.Runs) - 1; k >= 0; k-- {
			r := s.Runs[k]
			if _, measured := rq.Of(r); !measured {
				continue
			}
			var c host.Check
			if len(r.Host) == 0 || json.Unmarshal(r.Host, &c) != nil {
				continue
			}
			line := storageLine(c.Storage)
			if line == "" {
				continue
			}
			line = fmt.Sprintf("%s, on a host of %.1f GB of memory", line, float64(c.MemKB)/1e6)
			if !contains(seen, line) {
				seen = append(seen, line)
				lines = append(lines, line+" ("+s.Label+")")
			}
		}
	}
	if len(lines) == 0 {
		return nil
	}
	var d Doc
	d.Gap()
	for _, l := range lines {
		d.Sayf("Storage: %s", l)
	}
	return d.Blocks
}
