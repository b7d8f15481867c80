package metrics

import "github.com/qpslab/qpslab/internal/result"

// The figures the hardware sampler gives a run (result.Register): the
// seeds' per-op columns (sum_met.sh), CPU time per op in honest units, and
// the server tree's memory. Their aliases are the names the store's
// columns gave them before migration 11, and the CPU figures' old table
// headers.
func init() {
	result.Register(
		result.Metric{Name: "cpu/o", Max: 1e9, Per: "op", Class: result.ClassHW, Verb: "%.6f", Aliases: []string{"cpu_o"}, Rise: "more CPU per operation",
			Of:   serverHostOf(func(h *result.HW) float64 { return h.CPUPerOp }),
			Help: "avg(us+sy) / (o/s), vmstat's % of the whole host per op/s (the reference's cpu/o)"},
		result.Metric{Name: "cs/o", Max: 1e9, Per: "op", Class: result.ClassHW, Verb: "%.3f", Aliases: []string{"cs_o"},
			Rise: "more context switches per operation, the seeds' usual sign of a mutex or wake-up problem",
			Of:   serverHostOf(func(h *result.HW) float64 { return h.CSPerOp }), Help: "context switches per op"},
		result.Metric{Name: "r/o", Max: 1e9, Per: "op", Class: result.ClassHW, Verb: "%.4f", Aliases: []string{"r_o"},
			Of: diskOf(func(h *result.HW) float64 { return h.ReadsPerOp }), Help: "disk reads per op"},
		result.Metric{Name: "rKB/o", Max: 1e12, Unit: "KB", Per: "op", Class: result.ClassHW, Verb: "%.3f", Aliases: []string{"rkb_o"}, Rise: "more IO per operation",
			Of: diskOf(func(h *result.HW) float64 { return h.ReadKBPerOp }), Help: "KB read from disk per op"},
		result.Metric{Name: "wKB/o", Max: 1e12, Unit: "KB", Per: "op", Class: result.ClassHW, Verb: "%.3f", Aliases: []string{"wkb_o"}, Rise: "more IO per operation",
			Of: diskOf(func(h *result.HW) float64 { return h.WriteKBPerOp }), Help: "KB written to disk per op"},
		result.Metric{Name: "o/s", Max: result.MaxRate, HigherIsBetter: true, Per: "s", Class: result.ClassHW, Verb: "%.0f", Aliases: []string{"o_s"},
			Of: hwOf(func(h *result.HW) float64 { return h.OpsPerSec }), Help: "ops per second the per-op figures divide by"},
		result.Metric{Name: "host_cpu_us/o", Max: 1e12, Unit: "µs", Per: "op", Class: result.ClassCPU, Verb: "%.1f", Aliases: []string{"host_cpu_us_o", "host µs/o"},
			Of: serverCPUOf(func(h *result.HW) float64 { return h.HostCPUUsOp }), Help: "CPU time per op, whole host"},
		result.Metric{Name: "server_cpu_us/o", Max: 1e12, Unit: "µs", Per: "op", Class: result.ClassCPU, Verb: "%.1f", Aliases: []string{"server_cpu_us_o", "server µs/o"},
			Of: serverCPUOf(func(h *result.HW) float64 { return h.ServerCPUUsOp }), Help: "CPU time per op of the server's process tree"},
		result.Metric{Name: "client_cpu_us/o", Max: 1e12, Unit: "µs", Per: "op", Class: result.ClassCPU, Verb: "%.1f", Aliases: []string{"client_cpu_us_o", "client µs/o"},
			Of: cpuOf(func(h *result.HW) float64 { return h.ClientCPUUsOp }), Help: "CPU time per op of qpslab's client"},
		result.Metric{Name: "pss_mb", Max: 1e9, Unit: "MB", Per: "run", Class: result.ClassServer, Verb: "%.1f",
			Of:   memOf(func(a result.HWSecond) uint64 { return a.ServerPSS }),
			Help: "the server tree's proportional set size: shared pages (PostgreSQL's shared_buffers) counted once"},
		result.Metric{Name: "rss_mb", Max: 1e9, Unit: "MB", Per: "run", Class: result.ClassServer, Verb: "%.1f",
			Of:   memOf(func(a result.HWSecond) uint64 { return a.ServerRSS }),
			Help: "the server tree's resident set summed over its processes (shared pages once per process)"},
	)
}

// hwOf is a hardware figure; a run whose window was not measured lacks it.
func hwOf(f func(*result.HW) float64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if !r.HW.Measured() {
			return 0, false
		}
		return f(r.HW), true
	}
}

// serverHostOf is a figure of the server's host, which a run on a server
// of another host (a target, HW.Remote) lacks: the sampler saw only the
// client's host.
func serverHostOf(f func(*result.HW) float64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if !r.HW.Measured() || r.HW.Remote {
			return 0, false
		}
		return f(r.HW), true
	}
}

// serverCPUOf is a CPU time per op of the server or its host: unknown on
// an import of the reference's figures and on a server of another host.
func serverCPUOf(f func(*result.HW) float64) func(result.Run) (float64, bool) {
	cpu := cpuOf(f)
	return func(r result.Run) (float64, bool) {
		if r.HW.Measured() && r.HW.Remote {
			return 0, false
		}
		return cpu(r)
	}
}

// diskOf is a disk figure, which a run without a measured disk lacks.
func diskOf(f func(*result.HW) float64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if !r.HW.Measured() || r.HW.NoDisk {
			return 0, false
		}
		return f(r.HW), true
	}
}

// cpuOf is a CPU time per op, which an import of the reference's figures
// lacks.
func cpuOf(f func(*result.HW) float64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if !r.HW.Measured() || r.HW.NoCPUTime {
			return 0, false
		}
		return f(r.HW), true
	}
}

// memOf is the server tree's memory in MB, which a run lacks where it was
// not read.
func memOf(f func(result.HWSecond) uint64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if !r.HW.Measured() || f(r.HW.Avg) == 0 {
			return 0, false
		}
		return float64(f(r.HW.Avg)) / 1024, true
	}
}
