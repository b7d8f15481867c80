package build

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// A source tarball (the upstream tarball `qpslab builds source` prints,
// NAME_VERSION.orig.tar.gz, or a project's release tarball) is compiled
// as the tree it holds: unpacked once into the cache, keyed by its
// SHA-256, so that a second compile of the same tarball reuses the tree
// (and its build folder, where make and ccache find their objects).

// sourceTarballMagic are the first bytes of what unpackSource takes:
// gzip, xz and bzip2 streams; a plain tar says "ustar" at byte 257.
var sourceTarballMagic = [][]byte{{0x1f, 0x8b}, {0xFD, '7', 'z', 'X', 'Z', 0}, []byte("BZh")}

// isSourceTarball says whether the file at p starts as a tarball does.
func isSourceTarball(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 263)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	for _, m := range sourceTarballMagic {
		if bytes.HasPrefix(head, m) {
			return true
		}
	}
	return n == 263 && string(head[257:262]) == "ustar"
}

// sourceMark is what a finished unpack of a source tarball records.
type sourceMark struct {
	Tarball string `yaml:"tarball"` // the file it was unpacked from
	SHA256  string `yaml:"sha256"`
	Tree    string `yaml:"tree"` // the tree's folder, relative to the unpack folder
}

// unpackSource unpacks the source tarball file into the cache, once per
// content (a tarball of the same SHA-256 is not unpacked again), and
// returns the tree it holds (its one top folder, or the unpack folder
// when it has several) and the tarball's SHA-256. An unpack that did not
// finish leaves no mark and is made again.
func (r Registry) unpackSource(ctx context.Context, file string, progress io.Writer) (string, string, error) {
	sum, err := fileSHA256(file)
	if err != nil {
		return "", "", fmt.Errorf("read the tarball %s: %w", file, err)
	}
	dir := filepath.Join(r.Cache, "src", "tarballs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("create %s: %w", dir, err)
	}
	dest := filepath.Join(dir, unsafeKey.ReplaceAllString(tarballBase(filepath.Base(file)), "_")+"-"+sum[:8])
	unlock, err := lockFile(ctx, dest+".lock")
	if err != nil {
		return "", "", err
	}
	defer unlock()
	var m sourceMark
	if raw, err := os.ReadFile(filepath.Join(dest, completeMark)); err == nil && yaml.Unmarshal(raw, &m) == nil && m.SHA256 == sum {
		if tree := filepath.Join(dest, m.Tree); filepath.IsLocal(m.Tree) || m.Tree == "." {
			return tree, sum, nil
		}
	}
	if progress != nil {
		fmt.Fprintf(progress, "compile: unpacking %s into %s\n", filepath.Base(file), dest)
	}
	tmp := dest + ".tmp"
	os.RemoveAll(tmp)
	os.RemoveAll(dest)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", "", fmt.Errorf("create %s: %w", tmp, err)
	}
	in, err := os.Open(file)
	if err != nil {
		os.RemoveAll(tmp)
		return "", "", fmt.Errorf("read the tarball %s: %w", file, err)
	}
	err = untar(ctx, in, file, tmp)
	in.Close()
	if err != nil {
		os.RemoveAll(tmp)
		return "", "", err
	}
	m = sourceMark{Tarball: file, SHA256: sum, Tree: "."}
	if ents, err := os.ReadDir(tmp); err == nil && len(ents) == 1 && ents[0].IsDir() {
		m.Tree = ents[0].Name() // rocksdb-9.10.0/
	} else if len(ents) == 0 {
		os.RemoveAll(tmp)
		return "", "", fmt.Errorf("the tarball %s holds no files: give the source tarball itself", file)
	}
	if err := os.Rename(tmp, dest); err != nil {
		os.RemoveAll(tmp)
		return "", "", fmt.Errorf("move the unpacked tree into place: %w", err)
	}
	raw, _ := yaml.Marshal(m)
	if err := os.WriteFile(filepath.Join(dest, completeMark), raw, 0o644); err != nil {
		return "", "", fmt.Errorf("mark %s complete: %w", dest, err)
	}
	return filepath.Join(dest, m.Tree), sum, nil
}
