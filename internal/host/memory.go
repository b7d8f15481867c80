package host

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// Available is the memory the kernel estimates can be given to new work
// without swapping (MemAvailable), in bytes.
func Available(roots Roots) (int64, error) {
	fs, err := procfs.NewFS(roots.Proc)
	if err != nil {
		return 0, fmt.Errorf("open procfs at %s: %w", roots.Proc, err)
	}
	mi, err := fs.Meminfo()
	if err != nil {
		return 0, fmt.Errorf("read %s/meminfo: %w", roots.Proc, err)
	}
	if mi.MemAvailable == nil {
		return 0, fmt.Errorf("%s/meminfo has no MemAvailable (a kernel before 3.14)", roots.Proc)
	}
	return int64(*mi.MemAvailable) * 1024, nil
}
