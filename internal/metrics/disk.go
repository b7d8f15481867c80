package metrics

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/qpslab/qpslab/internal/host"
)

// DisksOf finds the disk(s) that hold path: the block device of its file
// system, a partition resolved to its disk, a device-mapper device (LVM,
// dm-crypt) resolved through its slaves to theirs. File systems with no
// block device of their own (btrfs, overlay) are found through the mount
// table's source. It errs, naming the fix, when there is no disk to find
// (tmpfs).
//
// No library maps a path to its disk: procfs reads the counters but not
// sysfs's device links, and the reference harness picks its disk out of
// iostat's output by substring, which also matches partitions
// (docs/reference.md §6).
func DisksOf(roots host.Roots, path string) ([]string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, fmt.Errorf("find the disk of %s: %w", path, err)
	}
	maj, mnr := unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))
	if maj == 0 { // an anonymous device: try the mount's source
		src, fstype := host.MountSource(roots, path)
		var sst unix.Stat_t
		if !strings.HasPrefix(src, "/dev/") || unix.Stat(src, &sst) != nil || sst.Mode&unix.S_IFMT != unix.S_IFBLK {
			return nil, fmt.Errorf("%s is on %s, which has no block device: pass --device with the disk to measure, or put the datadir on a disk", path, fstype)
		}
		maj, mnr = unix.Major(uint64(sst.Rdev)), unix.Minor(uint64(sst.Rdev))
	}
	return resolveDevice(roots, maj, mnr)
}

// resolveDevice turns a device number into the names of the disks under it.
func resolveDevice(roots host.Roots, maj, mnr uint32) ([]string, error) {
	link := filepath.Join(roots.Sys, "dev/block", fmt.Sprintf("%d:%d", maj, mnr))
	dir, err := filepath.EvalSymlinks(link)
	if err != nil {
		return nil, fmt.Errorf("device %d:%d is not in %s/dev/block: pass --device with the disk to measure", maj, mnr, roots.Sys)
	}
	seen := map[string]bool{}
	var disks []string
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		if depth > 8 {
			return fmt.Errorf("device stack under %s is too deep", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
			dir = filepath.Dir(dir) // a partition's directory sits in its disk's
		}
		slaves, _ := os.ReadDir(filepath.Join(dir, "slaves"))
		if len(slaves) == 0 {
			if name := filepath.Base(dir); !seen[name] {
				seen[name] = true
				disks = append(disks, name)
			}
			return nil
		}
		for _, s := range slaves {
			next, err := filepath.EvalSymlinks(filepath.Join(dir, "slaves", s.Name()))
			if err != nil {
				return fmt.Errorf("resolve %s: %w", filepath.Join(dir, "slaves", s.Name()), err)
			}
			if err := walk(next, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(dir, 0); err != nil {
		return nil, err
	}
	sort.Strings(disks)
	return disks, nil
}

// CheckDevice says whether name is a block device in diskstats, for
// --device.
func CheckDevice(roots host.Roots, name string) error {
	b, err := os.ReadFile(filepath.Join(roots.Proc, "diskstats"))
	if err != nil {
		return fmt.Errorf("read diskstats: %w", err)
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 3 {
			if f[2] == name {
				return nil
			}
			if !strings.HasPrefix(f[2], "loop") && !strings.HasPrefix(f[2], "ram") {
				names = append(names, f[2])
			}
		}
	}
	return fmt.Errorf("--device %s is not a block device in %s/diskstats: use one of %s", name, roots.Proc, strings.Join(names, ", "))
}
