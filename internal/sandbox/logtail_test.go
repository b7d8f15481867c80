package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLogTail(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		n         int
		want      string
	}{
		{"postgres cause above FATAL",
			"LOG:  starting\nLOG:  invalid value for parameter \"shared_buffers\": \"lots\"\nFATAL:  configuration file \"x\" contains errors\n", 2,
			"LOG:  invalid value for parameter \"shared_buffers\": \"lots\" | FATAL:  configuration file \"x\" contains errors"},
		{"mariadb last errors",
			"[Note] a\n[ERROR] one\n[Note] b\n[ERROR] mariadbd: unknown variable 'x=1'\n[ERROR] Aborting\n\n", 2,
			"[Note] b | [ERROR] mariadbd: unknown variable 'x=1' | [ERROR] Aborting"},
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
