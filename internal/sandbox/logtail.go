package sandbox

import (
	"io"
	"os"
	"strings"
)

// logTail returns what a user needs from the end of a server or init log, as
// one line: its last n error lines with the line just before them (PostgreSQL
// logs the cause one line above its FATAL), or, with no error lines, its last
// n lines.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		f.Seek(st.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	var lines []string
	var errAt []int
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if isErrorLine(l) {
			errAt = append(errAt, len(lines))
		}
		lines = append(lines, l)
	}
	if len(errAt) == 0 {
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		return strings.Join(lines, " | ")
	}
	if len(errAt) > n {
		errAt = errAt[len(errAt)-n:]
	}
	var pick []string
	if first := errAt[0]; first > 0 && !isErrorLine(lines[first-1]) {
		pick = append(pick, lines[first-1])
	}
	for _, i := range errAt {
		pick = append(pick, lines[i])
	}
	return strings.Join(pick, " | ")
}

func isErrorLine(l string) bool {
	for _, w := range []string{"ERROR", "FATAL", "PANIC", "error:"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}
