package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A config or grid file named to qpslab is a regular one of at most 1 MiB:
// a FIFO is refused by name before anything opens it (before this, configs
// add and --grid waited on it for ever), and a FIFO in the configs folder
// is passed over by the listing.
func TestConfigFilesAreRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "my.cnf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	s := config.Store{Dir: filepath.Join(dir, "configs")}
	_, err := s.Add("mine", fifo, config.MySQL, false)
	testenv.WantErr(t, err, fifo+" is a named pipe (FIFO)")
	_, err = config.ReadGrid(fifo)
	testenv.WantErr(t, err, "read the grid", fifo+" is a named pipe (FIFO)")
	big := filepath.Join(dir, "big.cnf")
	os.WriteFile(big, []byte("[mysqld]\n"+strings.Repeat("# padding\n", 110_000)), 0o644)
	_, err = s.Add("big", big, config.MySQL, false)
	testenv.WantErr(t, err, "more than the 1 MiB qpslab reads")

	os.MkdirAll(s.Dir, 0o755)
	if err := syscall.Mkfifo(filepath.Join(s.Dir, "stuck.cnf"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.Name == "stuck" {
			t.Errorf("the FIFO is listed as a config: %+v", c)
		}
	}
	_, err = s.Get("stuck", config.MySQL)
	testenv.WantErr(t, err, "stuck.cnf is a named pipe (FIFO)")
}
