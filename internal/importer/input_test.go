package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/qpslab/qpslab/internal/testenv"
)

// noReader fails the test if the FIFO at p was opened for reading (a
// writer's non-blocking open fails with ENXIO while no one reads it).
func noReader(t *testing.T, p string) {
	t.Helper()
	w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		w.Close()
	}
	if !errors.Is(err, syscall.ENXIO) {
		t.Errorf("%s was opened for reading: a writer's open says %v", p, err)
	}
}

func mkfifo(t *testing.T, p string) string {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An import reads regular files under the folder it was given: a FIFO, a
// link out of the folder (a file's, a step folder's), an sb.r file longer
// than its one line may be, each refused by name; before this a FIFO kept
// the import waiting for ever and a link was followed anywhere.
func TestImportReadsOnlyRegularFilesUnderItsFolder(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("x\n"), 0o600)
	for _, c := range []struct {
		name  string
		ib    bool // an Insert Benchmark folder
		spoil func(t *testing.T, dir string)
		want  []string
	}{
		{"a FIFO as an sb.o file", false, func(t *testing.T, dir string) {
			remove(t, dir, "sb.o.point-query.pre.range100.pk1.dop4")
			mkfifo(t, filepath.Join(dir, "sb.o.point-query.pre.range100.pk1.dop4"))
		}, []string{"sb.o.point-query.pre.range100.pk1.dop4 is a named pipe (FIFO)", "regular files only"}},
		{"a link out of the folder", false, func(t *testing.T, dir string) {
			remove(t, dir, "sb.met.read-only.range10.pk1.dop1")
			os.Symlink(secret, filepath.Join(dir, "sb.met.read-only.range10.pk1.dop1"))
		}, []string{"sb.met.read-only.range10.pk1.dop1 is a symbolic link to " + secret, "leads out of"}},
		{"an sb.r file over its bound", false, func(t *testing.T, dir string) {
			write(t, dir, "sb.r.qps.point-query.pre.range100.pk1", strings.Repeat("1\t", mytoolsLimits.Line)+"InnoDB point-query.pre range=100\n")
		}, []string{"sb.r.qps.point-query.pre.range100.pk1 is", "more than the 1 MiB qpslab reads of such a file"}},
		{"a FIFO as an Insert Benchmark client's file", true, func(t *testing.T, dir string) {
			remove(t, dir, "l.i1/o.ib.dop2.2")
			mkfifo(t, filepath.Join(dir, "l.i1/o.ib.dop2.2"))
		}, []string{"l.i1/o.ib.dop2.2 is a named pipe (FIFO)"}},
		{"a step folder linked out of the folder", true, func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, "qr100.L1"), filepath.Join(dir, "..", "elsewhere"))
			os.Symlink(filepath.Join(dir, "..", "elsewhere"), filepath.Join(dir, "qr100.L1"))
		}, []string{"qr100.L1 is a symbolic link to", "leads out of"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var dir string
			if c.ib {
				dir = copyIbenchInto(t)
			} else {
				dir = copyMytools(t)
			}
			c.spoil(t, dir)
			runs, err := Mytools(ctx, dir, src)
			testenv.WantErr(t, err, c.want...)
			if len(runs) > 0 {
				t.Errorf("%d runs read beside the refusal", len(runs))
			}
			fifos, _ := filepath.Glob(filepath.Join(dir, "*", "o.ib.dop2.2"))
			fifos = append(fifos, filepath.Join(dir, "sb.o.point-query.pre.range100.pk1.dop4"))
			for _, f := range fifos {
				if fi, err := os.Lstat(f); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
					noReader(t, f)
				}
			}
		})
	}
}

// copyIbenchInto copies the Insert Benchmark fixture to a folder of its
// own inside a temporary one (so a step folder can be moved beside it).
func copyIbenchInto(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Rename(copyIbench(t), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A file named to import sysbench or import results: a FIFO refused by
// name, never opened for reading.
func TestImportFilesRefuseAFIFO(t *testing.T) {
	dir := t.TempDir()
	p := mkfifo(t, filepath.Join(dir, "out.txt"))
	_, err := SysbenchFiles(ctx, []string{p}, Source{Build: "b", Config: "c"}, "point-query_range=100")
	testenv.WantErr(t, err, "import sysbench: "+p+" is a named pipe (FIFO)")
	_, err = ResultsFiles(ctx, []string{p})
	testenv.WantErr(t, err, "import results: "+p+" is a named pipe (FIFO)")
	noReader(t, p)
}

// An import whose context ends stops with the context's error, which the
// command tells as an interruption, not as a file's fault.
func TestImportStopsWithItsContext(t *testing.T) {
	c, cancel := context.WithCancel(ctx)
	cancel()
	_, err := Mytools(c, mytoolsDir, src)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("mytools: %v", err)
	}
	_, err = Sysbench(c, filepath.Join("testdata", "sysbench-1.0.20-point-select.txt"), Source{Build: "b", Config: "c"}, "point-query_range=100")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("sysbench: %v", err)
	}
	_, err = Ibench(c, ibenchDir, ibSrc)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ibench: %v", err)
	}
}
