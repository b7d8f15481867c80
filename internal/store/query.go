package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/result"
)

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// Filter selects runs: a label (build and config name; either empty for
// any; and its storage engine), narrowed by thread count and host (a
// hostname or a host id prefix), and by status.
type Filter struct {
	Suite         string // "": any
	Build, Config string
	Threads       int      // 0: any
	Host          string   // "": any
	Status        []string // default: ok
	Samples       bool     // load the per-second samples too
	Stacks        bool     // load the captured stacks too (--pmp, --perf)
	Test          string   // "": any
	ID            string   // "": any; else the one run stored under this id
	StorageEngine string   // "": any; else that storage engine only (runs that record none count as InnoDB's)
}

// Runs reads the runs f selects, oldest first.
func (s *Store) Runs(ctx context.Context, f Filter) ([]result.Run, error) {
	where := []string{"1 = 1"}
	var args []any
	if f.Suite != "" {
		where = append(where, "r.suite = ?")
		args = append(args, f.Suite)
	}
	if f.Build != "" {
		where = append(where, "r.build = ?")
		args = append(args, f.Build)
	}
	if f.Config != "" {
		where = append(where, "r.config_name = ?")
		args = append(args, f.Config)
	}
	if f.Threads > 0 {
		where = append(where, "r.threads = ?")
		args = append(args, f.Threads)
	}
	if f.Host != "" {
		where = append(where, "(r.hostname = ? OR r.host_id LIKE ?)")
		args = append(args, f.Host, f.Host+"%")
	}
	if f.Test != "" {
		where = append(where, "r.test = ?")
		args = append(args, f.Test)
	}
	if f.ID != "" {
		where = append(where, "r.id = ?")
		args = append(args, f.ID)
	}
	st := f.Status
	if len(st) == 0 {
		st = []string{result.OK}
	}
	where = append(where, "r.status IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(st)), ", ")+")")
	for _, x := range st {
		args = append(args, x)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT r.id, r.suite, r.test, r.build, b.flavor, b.version, r.config, r.threads, r.loop_mode, r.rate, r.arrivals,
		r.params, r.seed, r.status, r.error, r.started, r.ended, r.warmup, r.duration, r.qpslab_version, r.totals, r.response_hist, r.service_hist,
		h.fingerprint, m.hw, r.step, r.role, r.groups, r.verdicts, r.plan_id, r.pairing, r.parts
		FROM `+visibleRuns+` r JOIN builds b ON b.name = r.build LEFT JOIN hosts h ON h.id = r.host_id LEFT JOIN metrics m ON m.run_id = r.id
		WHERE `+strings.Join(where, " AND ")+` ORDER BY r.started, r.id`), args...)
	if err != nil {
		return nil, fmt.Errorf("read store %s: %w", s.where, err)
	}
	defer rows.Close()
	var out []result.Run
	var ids []string
	for rows.Next() {
		var r result.Run
		var id, params, seed, started, ended, totals string
		var rh, sh []byte
		var fp, hw sql.NullString
		var groups, verdicts, parts string
		if err := rows.Scan(&id, &r.Suite, &r.Test, &r.Build, &r.Flavor, &r.Version, &r.Config, &r.Threads, &r.Loop, &r.Rate, &r.Arrivals,
			&params, &seed, &r.Status, &r.Error, &started, &ended, &r.Warmup, &r.Duration, &r.QpslabVersion, &totals, &rh, &sh, &fp, &hw,
			&r.Step, &r.Role, &groups, &verdicts, &r.Plan, &r.Pairing, &parts); err != nil {
			return nil, fmt.Errorf("read store %s: %w", s.where, err)
		}
		r.SchemaVersion = result.SchemaVersion
		bad := func(what string, err error) error {
			return fmt.Errorf("read store %s: run %s: %s: %w", s.where, id, what, err)
		}
		if err := json.Unmarshal([]byte(params), &r.Params); err != nil {
			return nil, bad("params", err)
		}
		if err := json.Unmarshal([]byte(groups), &r.Groups); err != nil {
			return nil, bad("groups", err)
		}
		result.Regroup(&r) // the suite's layouts decide, not what was stored
		if err := json.Unmarshal([]byte(verdicts), &r.Verdicts); err != nil {
			return nil, bad("verdicts", err)
		}
		if parts != "" {
			if err := json.Unmarshal([]byte(parts), &r.Parts); err != nil {
				return nil, bad("parts", err)
			}
		}
		r.Seed, _ = strconv.ParseUint(seed, 10, 64)
		r.Started, _ = time.Parse(time.RFC3339Nano, started)
		r.Ended, _ = time.Parse(time.RFC3339Nano, ended)
		if err := json.Unmarshal([]byte(totals), &r.Totals); err != nil {
			return nil, bad("totals", err)
		}
		r.Totals.ResponseHist, r.Totals.ServiceHist = rh, sh
		if fp.Valid {
			r.Host = json.RawMessage(fp.String)
		}
		if hw.Valid {
			r.HW = &result.HW{}
			if err := json.Unmarshal([]byte(hw.String), r.HW); err != nil {
				return nil, bad("hardware figures", err)
			}
		}
		if f.StorageEngine != "" && r.OtherStorageEngine() != label.OtherStorageEngine(f.StorageEngine) {
			continue
		}
		out = append(out, r)
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read store %s: %w", s.where, err)
	}
	if err := s.rounds(ctx, ids, out); err != nil {
		return nil, err
	}
	if f.Samples {
		for i, id := range ids {
			smp, err := s.samples(ctx, id)
			if err != nil {
				return nil, err
			}
			out[i].Samples = smp
		}
	}
	if f.Stacks {
		for i, id := range ids {
			st, err := s.stacks(ctx, id)
			if err != nil {
				return nil, err
			}
			out[i].Stacks = st
		}
	}
	return out, nil
}

func (s *Store) stacks(ctx context.Context, id string) ([]result.Stacks, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT data FROM stacks WHERE run_id = ? ORDER BY source`), id)
	if err != nil {
		return nil, fmt.Errorf("read stacks: %w", err)
	}
	defer rows.Close()
	var out []result.Stacks
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("read stacks: %w", err)
		}
		var st result.Stacks
		if err := json.Unmarshal([]byte(data), &st); err != nil {
			return nil, fmt.Errorf("read stacks of run %s: %w", id, err)
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// rounds fills the rounds of runs (stored under ids, in the same order),
// reading them a few hundred runs at a time.
func (s *Store) rounds(ctx context.Context, ids []string, runs []result.Run) error {
	at := make(map[string]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	const batch = 500
	for from := 0; from < len(ids); from += batch {
		part := ids[from:min(from+batch, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, s.q(`SELECT run_id, repeat_no, round_no, started, seconds, events, statements, n_rows, value, idle_cpu, figures
			FROM rounds WHERE run_id IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(part)), ", ")+`) ORDER BY run_id, repeat_no, round_no`), args...)
		if err != nil {
			return fmt.Errorf("read rounds: %w", err)
		}
		for rows.Next() {
			var id, started, fig string
			var rd result.Round
			if err := rows.Scan(&id, &rd.Repeat, &rd.Round, &started, &rd.Seconds, &rd.Events, &rd.Statements, &rd.Rows, &rd.Value, &rd.IdleCPU, &fig); err != nil {
				rows.Close()
				return fmt.Errorf("read rounds: %w", err)
			}
			if fig != "{}" && fig != "" {
				if err := json.Unmarshal([]byte(fig), &rd.Figures); err != nil {
					rows.Close()
					return fmt.Errorf("read rounds of run %s: %w", id, err)
				}
			}
			rd.Started, _ = time.Parse(time.RFC3339Nano, started)
			r := &runs[at[id]]
			r.Rounds = append(r.Rounds, rd)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("read rounds: %w", err)
		}
	}
	return nil
}

func (s *Store) samples(ctx context.Context, id string) ([]result.Sample, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT second, events, statements, n_rows, errors, retries, late, latency, response_hist, service_hist, ops, backlog, dur
		FROM samples WHERE run_id = ? ORDER BY second`), id)
	if err != nil {
		return nil, fmt.Errorf("read samples: %w", err)
	}
	defer rows.Close()
	var out []result.Sample
	for rows.Next() {
		var smp result.Sample
		var lat string
		var ops sql.NullString
		if err := rows.Scan(&smp.Second, &smp.Events, &smp.Statements, &smp.Rows, &smp.Errors, &smp.Retries, &smp.Late, &lat, &smp.ResponseHist, &smp.ServiceHist, &ops, &smp.Backlog, &smp.Dur); err != nil {
			return nil, fmt.Errorf("read samples: %w", err)
		}
		var l map[string]result.Latency
		if err := json.Unmarshal([]byte(lat), &l); err != nil {
			return nil, fmt.Errorf("read samples of run %s, second %d: %w", id, smp.Second, err)
		}
		smp.Response, smp.Service = l["response"], l["service"]
		if ops.Valid {
			if err := json.Unmarshal([]byte(ops.String), &smp.Ops); err != nil {
				return nil, fmt.Errorf("read samples of run %s, second %d: %w", id, smp.Second, err)
			}
		}
		out = append(out, smp)
	}
	return out, rows.Err()
}

// LabelInfo describes one label's stored results.
type LabelInfo struct {
	Label   string   `json:"label"`
	Suite   string   `json:"suite"`
	Version string   `json:"version"` // the build's
	Runs    int      `json:"runs"`
	Tests   int      `json:"tests"`
	Threads []int    `json:"threads"`
	Hosts   []string `json:"hosts"`
	Sources []string `json:"sources"`
	Status  string   `json:"status"` // counts by status: "40 ok, 1 aborted"
	First   string   `json:"first"`
	Last    string   `json:"last"`
}

// Labels lists every build.config (build.config:engine for an engine other
// than InnoDB) in the store, once per suite it has runs of.
func (s *Store) Labels(ctx context.Context) ([]LabelInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.build, r.config_name, r.suite, b.version, r.test, r.threads, r.hostname, COALESCE(r.host_id, ''), r.source, r.status, r.started, r.params
		FROM `+visibleRuns+` r JOIN builds b ON b.name = r.build ORDER BY r.build, r.config_name, r.suite, r.started`)
	if err != nil {
		return nil, fmt.Errorf("read store %s: %w", s.where, err)
	}
	defer rows.Close()
	var out []LabelInfo
	idx := map[string]int{}
	type sets struct{ tests, threads, hosts, sources map[string]bool }
	var aux []sets
	statuses := []map[string]int{}
	for rows.Next() {
		var b, c, suite, version, test, hostname, hostID, source, status, started, params string
		var threads int
		if err := rows.Scan(&b, &c, &suite, &version, &test, &threads, &hostname, &hostID, &source, &status, &started, &params); err != nil {
			return nil, fmt.Errorf("read store %s: %w", s.where, err)
		}
		r := result.Run{Build: b, Config: c}
		if err := json.Unmarshal([]byte(params), &r.Params); err != nil {
			return nil, fmt.Errorf("read store %s: params of a run of %s.%s: %w", s.where, b, c, err)
		}
		l := r.Label()
		i, ok := idx[l+"\x00"+suite]
		if !ok {
			i = len(out)
			idx[l+"\x00"+suite] = i
			out = append(out, LabelInfo{Label: l, Suite: suite, Version: version, First: started})
			aux = append(aux, sets{map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}})
			statuses = append(statuses, map[string]int{})
		}
		li := &out[i]
		li.Runs++
		if started > li.Last {
			li.Last = started
		}
		if started != "" && (li.First == "" || started < li.First) {
			li.First = started
		}
		aux[i].tests[test] = true
		if !aux[i].threads[strconv.Itoa(threads)] {
			aux[i].threads[strconv.Itoa(threads)] = true
			li.Threads = append(li.Threads, threads)
		}
		h := hostname
		if hostID != "" {
			h += "/" + hostID
		}
		if h != "" && !aux[i].hosts[h] {
			aux[i].hosts[h] = true
			li.Hosts = append(li.Hosts, h)
		}
		if !aux[i].sources[source] {
			aux[i].sources[source] = true
			li.Sources = append(li.Sources, source)
		}
		statuses[i][status]++
	}
	for i := range out {
		out[i].Tests = len(aux[i].tests)
		var parts []string
		for _, st := range []string{result.OK, result.Saturated, result.Failed, result.Aborted, "running"} {
			if n := statuses[i][st]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, st))
			}
		}
		out[i].Status = strings.Join(parts, ", ")
	}
	return out, rows.Err()
}

// Config is a stored config's name and content ("" when unknown).
func (s *Store) Config(ctx context.Context, id string) (name, content string, err error) {
	var c sql.NullString
	err = s.db.QueryRowContext(ctx, s.q(`SELECT name, content FROM configs WHERE id = ?`), id).Scan(&name, &c)
	if err != nil {
		return "", "", fmt.Errorf("read config %s: %w", id, err)
	}
	return name, c.String, nil
}
