// Package home owns the layout of the qpslab home directory: where builds are
// registered, where registry artifacts are cached, where user configs live and
// where each sandbox keeps its datadir and logs. It creates directories and
// nothing else; what goes into them belongs to the packages named for that.
package home

import (
	"fmt"
	"os"
	"path/filepath"
)

// Home is a resolved qpslab home directory.
type Home struct {
	Root  string // QPSLAB_HOME
	Cache string // registry artifacts and their unpacked trees; QPSLAB_CACHE overrides
}

// RootDefault is the home used by root. qpslab runs no server as root (it
// runs them as an unprivileged user), and that user must be able to reach
// the datadir; /root is mode 0700 on Debian, /var/lib is not.
const RootDefault = "/var/lib/qpslab"

// Resolve returns the home named by QPSLAB_HOME, or the default: ~/.qpslab,
// or RootDefault when running as root. It does not create anything.
func Resolve() (Home, error) {
	root := os.Getenv("QPSLAB_HOME")
	if root == "" {
		if os.Geteuid() == 0 {
			root = RootDefault
		} else {
			dir, err := os.UserHomeDir()
			if err != nil {
				return Home{}, fmt.Errorf("find the home directory: %w (set QPSLAB_HOME)", err)
			}
			root = filepath.Join(dir, ".qpslab")
		}
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return Home{}, fmt.Errorf("resolve QPSLAB_HOME %q: %w", root, err)
	}
	h := Home{Root: root, Cache: filepath.Join(root, "cache")}
	if c := os.Getenv("QPSLAB_CACHE"); c != "" {
		if h.Cache, err = filepath.Abs(c); err != nil {
			return Home{}, fmt.Errorf("resolve QPSLAB_CACHE %q: %w", c, err)
		}
	}
	return h, nil
}

// Builds is where build records (one YAML file per build) are kept.
func (h Home) Builds() string { return filepath.Join(h.Root, "builds") }

// Configs is where users' own config variants are kept.
func (h Home) Configs() string { return filepath.Join(h.Root, "configs") }

// Sandboxes holds one directory per sandbox.
func (h Home) Sandboxes() string { return filepath.Join(h.Root, "sandboxes") }

// Logs is where qpslab server prune --keep-logs keeps the logs of the
// sandboxes it removes.
func (h Home) Logs() string { return filepath.Join(h.Root, "logs") }

// Ingest is where qpslab serve unpacks a posted upload before it is
// stored (a folder per post, removed when the post is done).
func (h Home) Ingest() string { return filepath.Join(h.Root, "ingest") }

// Results is where results are stored.
func (h Home) Results() string { return filepath.Join(h.Root, "results") }

// Reports is where qpslab demo writes its HTML report.
func (h Home) Reports() string { return filepath.Join(h.Root, "reports") }

// StoreFile is the SQLite store used when no --store names another.
func (h Home) StoreFile() string { return filepath.Join(h.Root, "qpslab.db") }

// Reserve is a file of space kept on the home's disk, freed when the disk
// fills so that a run's end and why can still be written (recorder).
func (h Home) Reserve() string { return filepath.Join(h.Root, "reserve") }

// DetectSettings is the settings file qpslab detect reads when no
// --settings names another.
func (h Home) DetectSettings() string { return filepath.Join(h.Root, "detect.yaml") }

// TuneState is where qpslab host tune saves what it changed, for qpslab
// host reset to put back.
func (h Home) TuneState() string { return filepath.Join(h.Root, "host", "tune-state.json") }

// BoostState is where qpslab run --boost keeps the boost files' content
// from before its first switch, until it puts them back.
func (h Home) BoostState() string { return filepath.Join(h.Root, "host", "boost-state.json") }

// Ensure creates dir (and parents) with mode 0755 so that an unprivileged
// server user can traverse it, and reports a failure as one line.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, unwrapPath(err))
	}
	return nil
}

// EnsurePrivate creates dir for results or reports: missing folders above
// it as Ensure does, dir itself 0700, so that no other user of the host
// reads them (their files are 0600). A folder that exists keeps its mode:
// one someone made is theirs to set.
func EnsurePrivate(dir string) error {
	if err := Ensure(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return fmt.Errorf("create %s: %w", dir, unwrapPath(err))
	}
	return nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
