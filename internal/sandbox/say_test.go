package sandbox

import (
	"bytes"
	"testing"

	"github.com/qpslab/qpslab/internal/table"
)

// A dry run says what would go and what it would free; the total is the
// sum of what each sandbox holds.
func TestPruned(t *testing.T) {
	removed := []Pruned{{Name: "a", Status: "stopped", Bytes: 1500}, {Name: "b", Status: "died", Bytes: 2500, Logs: "/h/logs/b-T", Note: "datadir /d left in place"}}
	kept := []Kept{{Name: "c", Why: "its server is running"}}
	for _, tt := range []struct {
		dry  bool
		want string
	}{
		{true, "would remove a (stopped): 1.5 kB\nwould remove b (died): 2.5 kB, logs kept in /h/logs/b-T; datadir /d left in place\nkept c: its server is running\nwould free 4.0 kB in 2 sandbox(es)\n"},
		{false, "removed a (stopped): 1.5 kB\nremoved b (died): 2.5 kB, logs kept in /h/logs/b-T; datadir /d left in place\nkept c: its server is running\nfreed 4.0 kB in 2 sandbox(es)\n"},
	} {
		var b bytes.Buffer
		SayPruned(&b, removed, kept, tt.dry)
		if b.String() != tt.want {
			t.Errorf("dry run %v:\n%s\nwant:\n%s", tt.dry, b.String(), tt.want)
		}
	}
}

// The status table, then why each failed or died sandbox is so; stop --all
// leaves out the sandboxes that were not running.
func TestSandboxesAndStopped(t *testing.T) {
	var b bytes.Buffer
	err := table.Render(&b, table.Text, ListTable([]State{
		{Name: "s1", Build: "mariadb-system", Version: "10.11.6", Config: "default@30225c8f0492"},
		{Name: "s2", Build: "mariadb-system", Version: "10.11.6", Config: "bad@69c7cf63bbf4", Failed: "unknown variable"},
	}), table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `NAME  BUILD           VERSION  CONFIG                STATE    PID  PORT  SOCKET
s1    mariadb-system  10.11.6  default@30225c8f0492  stopped  -    -     -
s2    mariadb-system  10.11.6  bad@69c7cf63bbf4      failed   -    -     -
s2 failed: unknown variable
`
	if b.String() != want {
		t.Errorf("Sandboxes:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	SayStopped(&b, "a", true, true)
	SayStopped(&b, "b", false, true)
	SayStopped(&b, "c", false, false)
	if want := "stopped a\nc was not running\n"; b.String() != want {
		t.Errorf("Stopped: %q, want %q", b.String(), want)
	}
}
