package sandbox

import (
	"io"
	"os"
	"strings"
)

// logTail returns what a user needs from the end of a server or init log, as
// one line: its last error lines if it has any, else its last lines.
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
	var all, errs []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		all = append(all, l)
		if strings.Contains(l, "ERROR") || strings.Contains(l, "FATAL") || strings.Contains(l, "PANIC") || strings.Contains(l, "error:") {
			errs = append(errs, l)
		}
	}
	pick := all
	if len(errs) > 0 {
		pick = errs
	}
	if len(pick) > n {
		pick = pick[len(pick)-n:]
	}
	return strings.Join(pick, " | ")
}
