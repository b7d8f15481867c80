package history

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Otava's CSV layout (apache/otava docs/CSV.md): a time column, attribute
// columns (commit, …) and one column per metric; Otava's CsvImporter takes
// the rows in the file's order (it filters by time, it does not sort).
// Nyrkiö's upload shape (nyrkio backend/api/model.py): an array of
// {timestamp, metrics: [{name, unit, value, direction}], attributes:
// {git_repo, branch, git_commit}, extra_info}. Both are small enough that
// encoding/csv and encoding/json are the whole of the work.

// timeLayouts are the time formats read from Otava CSV files.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05", "2006.01.02 15:04:05 -0700",
	"2006.01.02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"}

// Unix seconds outside years 1 to 9999 are no time (and a NaN or an
// infinity would convert to any int64).
const minUnix, maxUnix = -62135596800, 253402300799

// ParseTime reads a time as the history files give one: RFC 3339,
// "2006-01-02 15:04:05 -0700" (and the layouts in timeLayouts), or unix
// seconds. Times are UTC.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseFloat(s, 64); err == nil { // unix seconds
		if !(n >= minUnix && n <= maxUnix) {
			return time.Time{}, fmt.Errorf("time %q is out of range (unix seconds of years 1 to 9999)", s)
		}
		sec := int64(n)
		return time.Unix(sec, int64((n-float64(sec))*1e9)).UTC(), nil
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q is not RFC 3339, \"2006-01-02 15:04:05 -0700\" or unix seconds", s)
}

var lowerIsBetter = regexp.MustCompile(`(?i)(latency|p\d+|time|_ms$|_us$|/o$|cpu|duration|max)`)

// guessHigherIsBetter says a metric's direction from its name when no one
// said: latencies, times and per-op costs are lower-is-better.
func guessHigherIsBetter(name string) bool { return !lowerIsBetter.MatchString(name) }

// ReadOtavaCSV reads one Otava CSV test: the time column, attribute columns
// (any column with a value that is not a number; "commit"/"git_commit" is
// the commit), and metric columns (numbers). Rows keep the file's order, as
// Otava takes them (so a history in version order stays in it whatever its
// times); an empty time cell is a row without a time (what qpslab export
// writes for a build imported without one), which Otava itself refuses.
// lower names the metrics that are lower-is-better; nil guesses from names.
func ReadOtavaCSV(path, timeColumn string, lower []string) ([]Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	// Records one by one, for the line each starts on (a quoted field may
	// hold a newline, so record i is not line i+1).
	var recs [][]string
	var lines []int
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		recs, lines = append(recs, rec), append(lines, line)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("read %s: no rows under the header", path)
	}
	head := recs[0]
	if timeColumn == "" {
		timeColumn = "time"
	}
	tc := -1
	for i, h := range head {
		if strings.TrimSpace(h) == timeColumn {
			tc = i
		}
	}
	if tc < 0 {
		return nil, fmt.Errorf("%s:1: no %q column: name the time column with --time-column", path, timeColumn)
	}
	// Columns that are attributes whatever they hold: a version such as
	// 11.4 or an all-digit commit is no metric.
	attribute := map[string]bool{"index": true, "build": true, "version": true, "commit": true, "git_commit": true, "branch": true}
	numeric := make([]bool, len(head))
	filled := make([]bool, len(head))
	for i := range head {
		numeric[i] = i != tc && !attribute[strings.TrimSpace(head[i])]
	}
	for ln, rec := range recs[1:] {
		if len(rec) != len(head) {
			return nil, fmt.Errorf("%s:%d: %d fields, the header has %d", path, lines[ln+1], len(rec), len(head))
		}
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if v != "" {
				filled[i] = true
			}
			// 1e400 is a number too big, not a word: it fails below.
			if _, err := strconv.ParseFloat(v, 64); err != nil && !errors.Is(err, strconv.ErrRange) && v != "" {
				numeric[i] = false
			}
		}
	}
	// Every metric value is finite: nan and inf parse as numbers, and no
	// change point can be found across them.
	for ln, rec := range recs[1:] {
		for i, v := range rec {
			if v = strings.TrimSpace(v); !numeric[i] || v == "" {
				continue
			}
			if x, err := strconv.ParseFloat(v, 64); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s:%d: column %q: value %q is not finite: fix or remove the row", path, lines[ln+1], strings.TrimSpace(head[i]), v)
			}
		}
	}
	type row struct {
		t     time.Time
		attrs map[string]string
		rec   []string
	}
	rows := make([]row, 0, len(recs)-1)
	for ln, rec := range recs[1:] {
		var t time.Time
		if strings.TrimSpace(rec[tc]) != "" {
			var err error
			if t, err = ParseTime(rec[tc]); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, lines[ln+1], err)
			}
		}
		attrs := map[string]string{}
		for i, v := range rec {
			if i != tc && !numeric[i] {
				attrs[strings.TrimSpace(head[i])] = strings.TrimSpace(v)
			}
		}
		rows = append(rows, row{t, attrs, rec})
	}
	isLower := map[string]bool{}
	for _, m := range lower {
		isLower[m] = true
	}
	test := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var out []Series
	for i, h := range head {
		if !numeric[i] || !filled[i] {
			continue
		}
		name := strings.TrimSpace(h)
		s := Series{Test: test, Metric: name, Order: OrderFile, HigherIsBetter: guessHigherIsBetter(name)}
		if lower != nil {
			s.HigherIsBetter = !isLower[name]
		}
		for _, rw := range rows {
			v := strings.TrimSpace(rw.rec[i])
			if v == "" {
				continue // Otava skips empty cells too
			}
			x, _ := strconv.ParseFloat(v, 64)
			p := Point{Time: rw.t, Value: x, N: 1, Commit: firstOf(rw.attrs, "commit", "git_commit"), Build: firstOf(rw.attrs, "build"), Version: firstOf(rw.attrs, "version")}
			s.Points = append(s.Points, p)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no metric column (a column of numbers besides %q)", path, timeColumn)
	}
	return out, nil
}

func firstOf(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := m[k]; v != "" {
			return v
		}
	}
	return ""
}

// fileName makes a series group's name safe as a file name.
func fileName(s Series) string {
	n := s.Test
	if s.Suite != "" {
		n = s.Suite + "." + n
	}
	if s.Threads > 0 {
		n += fmt.Sprintf(".thr%d", s.Threads)
	}
	if s.Config != "" {
		n += "." + s.Config
	}
	if s.MixedFlavor {
		n += "." + s.Flavor
	}
	if s.Host != "" {
		n += "." + s.Host
	}
	if s.Mixed {
		n += "." + s.Conditions
	}
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("/\\: ,", r) {
			return '_'
		}
		return r
	}, n)
}

// groupKey is a series without its metric: the rows of one Otava test.
func groupKey(s Series) string { return fileName(s) }

// table joins a group's series into rows: one per build when the series
// have a point per build (in version or name order), else one per point
// time and build. A metric that a row lacks (a run without hardware
// figures) is NaN there.
func table(g []Series) ([]Point, [][]float64) {
	key := func(s Series, p Point) string {
		if s.Order != OrderTime {
			return p.Build
		}
		return p.Time.UTC().Format(time.RFC3339Nano) + "|" + p.Build
	}
	idx := map[string]int{}
	var rows []Point
	for _, s := range g {
		for _, p := range s.Points {
			if _, ok := idx[key(s, p)]; !ok {
				idx[key(s, p)] = len(rows)
				rows = append(rows, p)
			}
		}
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	byBuild := g[0].Order != OrderTime
	sort.SliceStable(order, func(a, b int) bool {
		x, y := rows[order[a]], rows[order[b]]
		if byBuild {
			return CompareBuilds(x, y) < 0
		}
		return x.Time.Before(y.Time)
	})
	pos := make([]int, len(rows)) // old row index → sorted position
	sorted := make([]Point, len(rows))
	for newPos, old := range order {
		pos[old] = newPos
		sorted[newPos] = rows[old]
	}
	vals := make([][]float64, len(rows))
	for i := range vals {
		vals[i] = make([]float64, len(g))
		for j := range vals[i] {
			vals[i][j] = math.NaN()
		}
	}
	for j, s := range g {
		for _, p := range s.Points {
			vals[pos[idx[key(s, p)]]][j] = p.Value
		}
	}
	return sorted, vals
}

// WriteOtavaCSV writes each group of series (same test, threads, config,
// host) as DIR/NAME.csv with columns time, build, version, commit and one per
// metric, and DIR/otava.yaml declaring them as Otava tests with each
// metric's direction. Rows join the group's series by build (or time), in
// the series' order, which Otava keeps; a metric a row lacks is left
// empty. The time is the row's own, or empty when it has none (a build
// imported without --time): never one made up. It returns the files
// written.
func WriteOtavaCSV(dir string, series []Series) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	groups, order := group(series)
	var files []string
	var yaml strings.Builder
	yaml.WriteString("# Written by qpslab export otava-csv: run `otava analyze <test>` in this folder.\ntests:\n")
	for _, k := range order {
		g := groups[k]
		path := filepath.Join(dir, k+".csv")
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		w := csv.NewWriter(f)
		head := []string{"time", "build", "version", "commit"}
		for _, s := range g {
			head = append(head, s.Metric)
		}
		w.Write(head)
		rows, vals := table(g)
		for i, p := range rows {
			when := ""
			if !p.Time.IsZero() {
				when = p.Time.UTC().Format("2006-01-02 15:04:05 -0700")
			}
			rec := []string{when, p.Build, p.Version, p.Commit}
			for j := range g {
				if math.IsNaN(vals[i][j]) {
					rec = append(rec, "") // Otava skips empty cells
				} else {
					rec = append(rec, strconv.FormatFloat(vals[i][j], 'g', -1, 64))
				}
			}
			w.Write(rec)
		}
		w.Flush()
		if err := w.Error(); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		files = append(files, path)
		fmt.Fprintf(&yaml, "  %q:\n    type: csv\n    file: %q\n    time_column: time\n    attributes: [build, version, commit]\n    metrics:\n", k, k+".csv")
		for _, s := range g {
			dir := 1
			if !s.HigherIsBetter {
				dir = -1
			}
			fmt.Fprintf(&yaml, "      %q:\n        column: %q\n        direction: %d\n", s.Metric, s.Metric, dir)
		}
	}
	y := filepath.Join(dir, "otava.yaml")
	if err := os.WriteFile(y, []byte(yaml.String()), 0o644); err != nil {
		return nil, err
	}
	return append(files, y), nil
}

func group(series []Series) (map[string][]Series, []string) {
	groups := map[string][]Series{}
	var order []string
	for _, s := range series {
		k := groupKey(s)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	return groups, order
}

// timesFollowOrder checks that rows in a series' order each have a time
// and that the times never fall, so a tool that orders by time keeps the
// order.
func timesFollowOrder(rows []Point) error {
	name := func(p Point) string {
		if p.Version != "" && p.Version != p.Build {
			return p.Build + " " + p.Version
		}
		return p.Build
	}
	for i, p := range rows {
		if p.Time.IsZero() {
			return fmt.Errorf("Nyrkiö orders results by time, and build %s has none (imported without --time): export otava-csv, which keeps the builds' order, or import it again with --time", name(p))
		}
		if i > 0 && p.Time.Before(rows[i-1].Time) {
			return fmt.Errorf("Nyrkiö orders results by time, and build %s ran before %s, which comes before it in the builds' order: export otava-csv, which keeps that order", name(p), name(rows[i-1]))
		}
	}
	return nil
}

// NyrkioResult is one element of Nyrkiö's upload array.
type NyrkioResult struct {
	Timestamp  int64             `json:"timestamp"`
	Metrics    []NyrkioMetric    `json:"metrics"`
	Attributes map[string]string `json:"attributes"`
	ExtraInfo  map[string]any    `json:"extra_info,omitempty"`
}

// NyrkioMetric is one metric of a Nyrkiö result.
type NyrkioMetric struct {
	Name      string  `json:"name"`
	Unit      string  `json:"unit"`
	Value     float64 `json:"value"`
	Direction string  `json:"direction,omitempty"` // higher_is_better or lower_is_better
}

// WriteNyrkioJSON writes each group of series as DIR/NAME.json, an array
// to POST to Nyrkiö's /api/v0/result/NAME. Nyrkiö orders results by their
// timestamp, so every row needs its own time, and the times must follow the
// series' order; a group where they do not (a build imported without a
// time, builds whose runs' times do not follow their versions) is refused,
// before any file is written, rather than given times that are not theirs.
// It returns the files written.
func WriteNyrkioJSON(dir string, series []Series) ([]string, error) {
	groups, order := group(series)
	tables := map[string][]Point{}
	vals := map[string][][]float64{}
	for _, k := range order {
		rows, v := table(groups[k])
		if err := timesFollowOrder(rows); err != nil {
			return nil, fmt.Errorf("nyrkio-json %s: %v", k, err)
		}
		tables[k], vals[k] = rows, v
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, k := range order {
		g := groups[k]
		rows, vals := tables[k], vals[k]
		var out []NyrkioResult
		for i, p := range rows {
			commit := p.Commit
			if commit == "" {
				commit = p.Build
			}
			res := NyrkioResult{Timestamp: p.Time.Unix(), Attributes: map[string]string{"git_repo": "qpslab", "branch": g[0].Config, "git_commit": commit},
				ExtraInfo: map[string]any{"build": p.Build, "version": p.Version, "threads": g[0].Threads, "host": g[0].Host, "runs": p.N}}
			for j, s := range g {
				if math.IsNaN(vals[i][j]) || math.IsInf(vals[i][j], 0) { // JSON holds neither
					continue
				}
				d := "higher_is_better"
				if !s.HigherIsBetter {
					d = "lower_is_better"
				}
				res.Metrics = append(res.Metrics, NyrkioMetric{Name: s.Metric, Unit: s.Unit, Value: vals[i][j], Direction: d})
			}
			out = append(out, res)
		}
		b, err := json.MarshalIndent(out, "", " ")
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, k+".json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}

// ReadNyrkioJSON reads a Nyrkiö upload array: a series per metric, ordered
// by timestamp, the commit from attributes.git_commit. lower, when not nil,
// names the lower-is-better metrics over the file's directions. Errors name
// the line the bad result starts on; a value JSON cannot hold as a finite
// float64 (1e400) is refused, not rounded to infinity.
func ReadNyrkioJSON(path string, lower []string) ([]Series, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	// Values as json.Number, so that one too big for a float64 gets this
	// reader's error rather than encoding/json's.
	type metric struct {
		Name      string      `json:"name"`
		Unit      string      `json:"unit"`
		Value     json.Number `json:"value"`
		Direction string      `json:"direction"`
	}
	type resultIn struct {
		Timestamp  int64             `json:"timestamp"`
		Metrics    []metric          `json:"metrics"`
		Attributes map[string]string `json:"attributes"`
		ExtraInfo  map[string]any    `json:"extra_info"`
	}
	type located struct {
		resultIn
		line int
	}
	notArray := func(off int64, err error) error {
		return fmt.Errorf("%s:%d: not a Nyrkiö result array: %v", path, lineAt(b, off), err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		if err == nil {
			err = fmt.Errorf("want [ … ], got %v", tok)
		}
		return nil, notArray(dec.InputOffset(), err)
	}
	var in []located
	for dec.More() {
		start := valueStart(b, dec.InputOffset())
		var r resultIn
		if err := dec.Decode(&r); err != nil {
			off := start // a value of the wrong type: the line its result starts on
			if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
				off = se.Offset // the stream's offset of the bad byte
			}
			return nil, notArray(off, err)
		}
		in = append(in, located{r, lineAt(b, start)})
	}
	if _, err := dec.Token(); err != nil {
		return nil, notArray(dec.InputOffset(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, notArray(dec.InputOffset(), fmt.Errorf("more after the array"))
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].Timestamp < in[j].Timestamp })
	test := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	idx := map[string]int{}
	var out []Series
	for _, r := range in {
		if r.Timestamp == 0 || len(r.Metrics) == 0 {
			return nil, fmt.Errorf("%s:%d: a result with no timestamp or no metrics", path, r.line)
		}
		if r.Timestamp < minUnix || r.Timestamp > maxUnix {
			return nil, fmt.Errorf("%s:%d: timestamp %d is out of range (unix seconds of years 1 to 9999)", path, r.line, r.Timestamp)
		}
		for _, m := range r.Metrics {
			v, err := strconv.ParseFloat(string(m.Value), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s:%d: metric %q: value %q is not finite: fix or remove the result", path, r.line, m.Name, string(m.Value))
			}
			j, ok := idx[m.Name]
			if !ok {
				j = len(out)
				idx[m.Name] = j
				hib := guessHigherIsBetter(m.Name)
				switch m.Direction {
				case "higher_is_better":
					hib = true
				case "lower_is_better":
					hib = false
				}
				out = append(out, Series{Test: test, Metric: m.Name, Unit: m.Unit, HigherIsBetter: hib, Order: "time"})
			}
			p := Point{Time: time.Unix(r.Timestamp, 0).UTC(), Value: v, N: 1, Commit: r.Attributes["git_commit"]}
			if r.ExtraInfo != nil {
				if b, ok := r.ExtraInfo["build"].(string); ok {
					p.Build = b
				}
				if v, ok := r.ExtraInfo["version"].(string); ok {
					p.Version = v
				}
			}
			out[j].Points = append(out[j].Points, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read %s: no results", path)
	}
	if lower != nil {
		isLower := map[string]bool{}
		for _, m := range lower {
			isLower[m] = true
		}
		for i := range out {
			out[i].HigherIsBetter = !isLower[out[i].Metric]
		}
	}
	return out, nil
}

// valueStart is where the next JSON value starts at or after off: past
// white space and the comma between array elements.
func valueStart(b []byte, off int64) int64 {
	for off < int64(len(b)) && strings.IndexByte(" \t\r\n,", b[off]) >= 0 {
		off++
	}
	return off
}

// lineAt is the 1-based line of byte offset off in b.
func lineAt(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return 1 + bytes.Count(b[:off], []byte("\n"))
}

// Read reads a history file by its extension: .csv (Otava) or .json
// (Nyrkiö).
func Read(path, timeColumn string, lower []string) ([]Series, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return ReadOtavaCSV(path, timeColumn, lower)
	case ".json":
		return ReadNyrkioJSON(path, lower)
	}
	return nil, fmt.Errorf("%s: read .csv (Otava's layout) or .json (Nyrkiö's upload shape)", path)
}

// CheckExport refuses an export format Write does not write.
func CheckExport(format string) error {
	if format != "otava-csv" && format != "nyrkio-json" {
		return fmt.Errorf("export %s: use otava-csv or nyrkio-json", format)
	}
	return nil
}

// Write exports series to dir in format otava-csv (with otava.yaml) or
// nyrkio-json, and returns the files it wrote.
func Write(dir, format string, series []Series) ([]string, error) {
	if err := CheckExport(format); err != nil {
		return nil, err
	}
	var files []string
	var err error
	if format == "otava-csv" {
		files, err = WriteOtavaCSV(dir, series)
	} else {
		files, err = WriteNyrkioJSON(dir, series)
	}
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return files, nil
}
