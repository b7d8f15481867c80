package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The lines picked from recorded server logs (testdata/README.md) name the
// cause, not only the last error lines.
func TestExplainRecordedLogs(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    []string // each must be in the explanation
		notWant []string
	}{
		{"mariadb-10.11-disk-full.log",
			[]string{"failed with error 28", "Out of disk space", "got signal 6"},
			[]string{"Aborting", "Writing a core file"}},
		{"mariadb-10.11-unknown-option.log",
			[]string{"unknown variable 'no_such_option_qpslab=1'"},
			[]string{"Aborting", "max_open_files"}},
		{"mariadb-10.2-sigsegv.log",
			[]string{"mysqld got signal 11"},
			nil},
		{"postgres-15-bad-config.log",
			[]string{`invalid value for parameter "shared_buffers": "lots"`, "FATAL:  configuration file"},
			nil},
		{"postgres-15-backend-crash-then-immediate-shutdown.log",
			// The crash was recovered from ("ready to accept connections"
			// again); what ended the server is the shutdown request.
			[]string{"received immediate shutdown request"},
			[]string{"terminated by signal 6"}},
		{"postgres-15-disk-full-errors.log",
			[]string{"No space left on device"},
			[]string{"checkpoint complete"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := explain(readLog(filepath.Join("testdata", tc.file), 0), 3, false)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("explanation %q lacks %q", got, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("explanation %q has %q", got, w)
				}
			}
			if n := strings.Count(got, " | ") + 1; n > 4 {
				t.Errorf("%d lines, want at most 3 (and one LOG line of context): %q", n, got)
			}
		})
	}
}

// The disk-full log's cause comes in log order: the OS error first.
func TestExplainOrder(t *testing.T) {
	got := explain(readLog(filepath.Join("testdata", "mariadb-10.11-disk-full.log"), 0), 3, false)
	i, j := strings.Index(got, "error 28"), strings.Index(got, "got signal 6")
	if i < 0 || j < 0 || i > j {
		t.Errorf("want the error 28 line before the signal 6 line: %q", got)
	}
}

func TestWeight(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int
	}{
		{"2024-01-01 0 [ERROR] InnoDB: Operating system error number 28 in a file operation.", 4},
		{"[ERROR] InnoDB: Error number 28 means 'No space left on device'", 4},
		{"[ERROR] mysqld: Error writing file './binlog.000001' (Errcode: 28 \"No space left on device\")", 4},
		{`PANIC:  could not write to file "pg_wal/xlogtemp.123": No space left on device`, 4},
		{"FATAL:  could not create shared memory segment: Cannot allocate memory", 4},
		{"[Warning] Could not increase number of max_open_files to more than 20000 (request: 32184)", 0},
		{"[Note] InnoDB: error 28 was here", 0},
		{"LOG:  server process (PID 1) was terminated by signal 9: Killed", 3},
		{"[ERROR] mysqld got signal 11 ;", 3},
		{"FATAL:  the database system is starting up", 0},
		{"[ERROR] Aborting", 0},
		{"[ERROR] mariadbd: unknown variable 'x=1'", 2},
		{"ERROR:  duplicate key value violates unique constraint \"t_pkey\"", 0},
		{"initdb: error: directory \"x\" exists but is not empty", 2},
		{"LOG:  received fast shutdown request", 1},
		{"[Note] /usr/sbin/mariadbd (initiated by: unknown): Normal shutdown", 1},
	} {
		if got := weight(tc.line); got != tc.want {
			t.Errorf("weight(%q) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

func TestLogTail(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		n         int
		want      string
	}{
		{"postgres cause above FATAL",
			"LOG:  starting\nLOG:  invalid value for parameter \"shared_buffers\": \"lots\"\nFATAL:  configuration file \"x\" contains errors\n", 2,
			"LOG:  invalid value for parameter \"shared_buffers\": \"lots\" | FATAL:  configuration file \"x\" contains errors"},
		{"mariadb last errors, Aborting left out",
			"[Note] a\n[ERROR] one\n[Note] b\n[ERROR] mariadbd: unknown variable 'x=1'\n[ERROR] Aborting\n\n", 2,
			"[ERROR] one | [ERROR] mariadbd: unknown variable 'x=1'"},
		{"no errors: last lines", "a\nb\nc\nd\n", 3, "b | c | d"},
		{"empty", "", 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "log")
			os.WriteFile(p, []byte(tc.log), 0o644)
			if got := logTail(p, tc.n); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A log that says nothing of weight explains nothing (a SIGKILL leaves no
// line): the exit status alone must speak.
func TestExplainNothing(t *testing.T) {
	lines := []string{"[Note] ready for connections.", "Version: '10.11'"}
	if got := explain(lines, 3, false); got != "" {
		t.Errorf("got %q, want nothing", got)
	}
}

// Only the log of this start counts: readLog starts at the offset.
func TestReadLogFrom(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	old := "[ERROR] InnoDB: Operating system error number 28\n"
	os.WriteFile(p, []byte(old+"[Note] started again\n"), 0o644)
	got := readLog(p, int64(len(old)))
	if len(got) != 1 || got[0] != "[Note] started again" {
		t.Errorf("readLog from the offset = %q", got)
	}
}
