package sandbox

import (
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// What a server or init log says about why the process ended, as one line.
// The last lines of a log are mostly the effect ("[ERROR] Aborting", a
// PostgreSQL client told "the database system is shutting down"); the cause
// comes earlier and is found by kind, in this order of weight:
//
//	4 an operating-system error: a number or text of errno 28 (ENOSPC), 12,
//	  5 … ("InnoDB: Operating system error number 28", "Errcode: 28",
//	  "could not write …: No space left on device")
//	3 a crash or fatal error: PANIC, FATAL, "got signal 11", "terminated by
//	  signal", an assertion
//	2 an error line: [ERROR], "error:", "ERROR 1064 …"
//	1 a shutdown someone asked for ("received fast shutdown request",
//	  "Normal shutdown")
//
// Warnings and notes never explain (except the shutdown notes), nor do the
// lines that are always there as an effect (see noise). Of the weightiest kind
// present, OS errors and crashes are taken from the first (the root comes
// first, the rest cascades from it), error lines from the last.

// osErrnos are the errors that kill a server or stop it from starting; their
// numbers and texts (as strerror says them) are recognised.
var osErrnos = []syscall.Errno{
	syscall.ENOSPC, syscall.EDQUOT, syscall.ENOMEM, syscall.EIO, syscall.EROFS,
	syscall.EMFILE, syscall.ENFILE, syscall.EACCES, syscall.EFBIG,
}

var (
	errnoNumRE = regexp.MustCompile(`(?i)(?:error number|error|errno|errcode|os error)[:=]?\s*(\d+)\b`)
	errnoText  = func() []string {
		// Beside strerror's texts, the servers' own words for them.
		out := []string{"out of memory", "out of disk space", "disk full"}
		for _, e := range osErrnos {
			out = append(out, strings.ToLower(e.Error()))
		}
		return out
	}()
	errnoNum = func() map[int]bool {
		m := map[int]bool{}
		for _, e := range osErrnos {
			m[int(e)] = true
		}
		return m
	}()
)

// noise are lines that appear around every start, stop or death and explain
// none: PostgreSQL telling clients why they cannot connect, MariaDB's last
// word.
var noise = []string{
	"the database system is starting up",
	"the database system is shutting down",
	"the database system is in recovery mode",
	"the database system is not yet accepting connections",
	"terminating connection due to administrator command",
	"terminating connection due to unexpected postmaster exit",
	"terminating connection because of crash of another server process",
	"[ERROR] Aborting",
}

var (
	crashWords = []string{"PANIC", "FATAL", "got signal", "terminated by signal", "terminated by exception", "Assertion failure", "ssertion failed", "Failing assertion"}
	// PostgreSQL's "ERROR:" is a session's error (a query failed) and never
	// what ends a server; its server-level trouble is FATAL or PANIC.
	errorWords    = []string{"[ERROR]", "error:", "ERROR "}
	shutdownWords = []string{"shutdown request", "Normal shutdown", "to shutdown", "Received SHUTDOWN", "received SIGTERM", "received signal 15"}
	quietWords    = []string{"[Warning]", "[Note]", "WARNING:", "NOTICE:", "HINT:", "INFO:", "DEBUG"}
)

func containsAny(l string, words []string) bool {
	for _, w := range words {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// weight classifies one log line (see the top of this file).
func weight(l string) int {
	if containsAny(l, noise) {
		return 0
	}
	quiet := containsAny(l, quietWords)
	switch {
	case !quiet && isOSError(l):
		return 4
	case !quiet && containsAny(l, crashWords):
		return 3
	case !quiet && containsAny(l, errorWords):
		return 2
	case containsAny(l, shutdownWords):
		return 1
	}
	return 0
}

func isOSError(l string) bool {
	for _, m := range errnoNumRE.FindAllStringSubmatch(l, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil && errnoNum[n] {
			return true
		}
	}
	low := strings.ToLower(l)
	for _, t := range errnoText {
		if strings.Contains(low, t) {
			return true
		}
	}
	return false
}

// readLog returns the non-empty lines of path from offset from on (at most
// the last 256 KiB of them).
func readLog(path string, from int64) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const max = 256 << 10
	if st, err := f.Stat(); err == nil {
		if st.Size() < from {
			from = 0 // the log was replaced
		}
		if st.Size()-from > max {
			from = st.Size() - max
		}
	}
	f.Seek(from, io.SeekStart)
	b, _ := io.ReadAll(f)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 400 {
				l = l[:400] + "…"
			}
			lines = append(lines, l)
		}
	}
	return lines
}

// readyWords mark a server that has (again) become ready: PostgreSQL after a
// crash of one of its processes recovers and says so, and what came before is
// history, not why it ends now.
var readyWords = []string{"ready to accept connections", "ready for connections"}

// explain picks up to n lines that explain how the log's process ended, " | "
// joined, in log order: the weightiest kind first, then lighter kinds while
// there is room. Lines after the server last said it was ready count alone
// when any of them weighs. With nothing of weight it returns the last n lines
// if lastLines, else "".
func explain(lines []string, n int, lastLines bool) string {
	w := make([]int, len(lines))
	for i, l := range lines {
		w[i] = weight(l)
	}
	from := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if containsAny(lines[i], readyWords) {
			for j := i + 1; j < len(lines); j++ {
				if w[j] > 0 {
					from = i + 1
					break
				}
			}
			break
		}
	}
	var at []int
	seen := map[string]bool{}
	// add takes line i unless one like it (digits aside: offsets, pids,
	// times) is taken already; it reports whether there is room for more.
	add := func(i int) bool {
		key := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return -1
			}
			return r
		}, lines[i])
		if !seen[key] {
			seen[key] = true
			at = append(at, i)
		}
		return len(at) < n
	}
	room := true
	for c := 4; c >= 1 && room; c-- {
		if c >= 3 { // the root comes first
			for i := from; i < len(lines) && room; i++ {
				if w[i] == c {
					room = add(i)
				}
			}
		} else { // the last word
			for i := len(lines) - 1; i >= from && room; i-- {
				if w[i] == c {
					room = add(i)
				}
			}
		}
	}
	if len(at) == 0 {
		if !lastLines {
			return ""
		}
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		return strings.Join(lines, " | ")
	}
	sort.Ints(at)
	var pick []string
	for k, i := range at {
		// PostgreSQL logs the cause of a FATAL as a LOG line just above it
		// ("invalid value for parameter …" above "configuration file …
		// contains errors").
		if k == 0 && i > 0 && w[i-1] == 0 && strings.Contains(lines[i-1], "LOG:") && strings.Contains(lines[i], "FATAL:") {
			pick = append(pick, lines[i-1])
		}
		pick = append(pick, lines[i])
	}
	return strings.Join(pick, " | ")
}

// logTail returns what a user needs from a server or init log to see why a
// start failed, as one line: the lines that explain it, or its last n lines.
func logTail(path string, n int) string { return explain(readLog(path, 0), n, true) }
