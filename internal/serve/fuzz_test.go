package serve

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzUntar holds the tarball reader of the ingest to its rules whatever
// the body: no panic; nothing written outside its folder; no more than
// MaxUnpack bytes; only files and folders; an error of one line.
func FuzzUntar(f *testing.F) {
	f.Add(rawTar(tar.Header{Name: "sb.r.qps.point-query.range100.pk1", Typeflag: tar.TypeReg, Linkname: "1000\n"}))
	f.Add(rawTar(tar.Header{Name: "dir/", Typeflag: tar.TypeDir}, tar.Header{Name: "dir/a", Typeflag: tar.TypeReg, Linkname: "x"}))
	f.Add(rawTar(tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Linkname: "x"}))
	f.Add(rawTar(tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, body []byte) {
		base, err := os.MkdirTemp("", "qpslab-fuzz-untar-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(base)
		root := filepath.Join(base, "tarball")
		s := &Server{o: Options{MaxUnpack: limit}}
		if err := s.untar(bytes.NewReader(body), root); err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("an error of several lines: %q", err)
		}
		var total int64
		werr := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != base && p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
				return errors.New("written outside the folder: " + p)
			}
			if !d.IsDir() && !d.Type().IsRegular() {
				return errors.New("not a file or folder: " + p)
			}
			if d.Type().IsRegular() {
				fi, err := os.Stat(p)
				if err != nil {
					return err
				}
				total += fi.Size()
			}
			return nil
		})
		if werr != nil {
			t.Fatal(werr)
		}
		if total > limit {
			t.Errorf("unpacked %d bytes, the limit is %d", total, limit)
		}
	})
}
