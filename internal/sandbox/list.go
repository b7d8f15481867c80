package sandbox

import (
	"fmt"

	"github.com/qpslab/qpslab/internal/table"
)

// ListTable is qpslab server status: each sandbox's build, version, config
// and state, with the pid, port and socket of a running one; then, for
// each that failed or died, a line saying why.
func ListTable(sts []State) *table.Table {
	t := table.New("NAME", "BUILD", "VERSION", "CONFIG", "STATE", "PID", "PORT", "SOCKET")
	for _, st := range sts {
		state, pid, port, sock := st.Status(), "-", "-", "-"
		if state == "running" {
			pid, port, sock = fmt.Sprint(st.PID), fmt.Sprint(st.Endpoint.Port), st.Endpoint.Socket
		}
		t.Add(st.Name, st.Build, st.Version, st.Config, state, pid, port, sock)
		switch state {
		case "failed":
			t.Note("%s failed: %s", st.Name, st.Failed)
		case "died":
			t.Note("%s died: %s", st.Name, st.Died)
		}
	}
	return t
}
