package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A flavor is its descriptor and its name in flavors: with both, --flavor
// takes it, its basedirs are found and their servers' banners read as its,
// and the rest of qpslab learns what it shares with the others from it.
func TestANewFlavorIsItsDescriptor(t *testing.T) {
	toy := Descriptor{
		Flavor: "toydb", Title: "ToyDB", Names: []string{"toy"},
		Protocol: "mysql", Family: "mysql", Start: "mysql", Counters: "mysql",
		layout: func(f Flavor, basedir string) (Layout, error) {
			l := Layout{Server: firstFile(basedir, "bin/toyd")}
			if l.Server == "" {
				return Layout{}, fmt.Errorf("basedir %s has no bin/toyd", basedir)
			}
			return l, nil
		},
		version: func(banner string) (string, bool) { return strings.CutPrefix(banner, "toyd version ") },
	}
	saved := flavors
	flavors = append(append([]*Descriptor(nil), flavors...), &toy)
	defer func() { flavors = saved }()

	f, err := ParseFlavor("toy")
	if err != nil || f != "toydb" {
		t.Fatalf("ParseFlavor(toy) = %q, %v; want toydb", f, err)
	}
	base := t.TempDir()
	os.MkdirAll(filepath.Join(base, "bin"), 0o755)
	if err := os.WriteFile(filepath.Join(base, "bin/toyd"), []byte("#!/bin/sh\necho 'toyd version 1.2.3'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, got, ver, _, err := Inspect(context.Background(), f, base)
	if err != nil || got != f || ver != "1.2.3" || l.Server != filepath.Join(base, "bin/toyd") {
		t.Fatalf("Inspect = %+v, %q, %q, %v; want toydb 1.2.3 at bin/toyd", l, got, ver, err)
	}
	if d := f.Describe(); !f.HasServer() || d.Protocol != "mysql" || d.Start != "mysql" || d.Title != "ToyDB" {
		t.Errorf("Describe(toydb) = %+v", d)
	}
	// The flavors before it still read their own banners.
	if _, _, _, _, err := Inspect(context.Background(), MariaDB, base); err == nil {
		t.Errorf("a toyd basedir passes for MariaDB")
	}
}

// Every descriptor says what the packages above ask of it.
func TestDescriptorsAreComplete(t *testing.T) {
	for _, d := range flavors {
		server := d.Protocol != ""
		switch {
		case d.Title == "" || d.Family == "" || d.layout == nil:
			t.Errorf("%s: a descriptor needs a Title, a Family and a layout", d.Flavor)
		case d.version == nil && d.readVersion == nil:
			t.Errorf("%s: a descriptor needs a version or a readVersion", d.Flavor)
		case server && (d.Start == "" || d.Counters == "" || d.Dialect == ""):
			t.Errorf("%s: a server's descriptor names its Start, its Counters and its Dialect", d.Flavor)
		case !server && (d.Start != "" || d.StorageEngines || d.Dialect != ""):
			t.Errorf("%s: a flavor with no server has no Start, no Engines and no Dialect", d.Flavor)
		}
	}
}

// A build record's flavor is checked where it is read: one qpslab does not
// know is refused with the record's path and the fix; one recorded before
// builds had flavors is MariaDB's, as every build then was.
func TestRecordFlavor(t *testing.T) {
	r := Registry{Dir: t.TempDir()}
	write := func(name, flavor string) {
		rec := "name: " + name + "\nbasedir: /nowhere\nversion: \"1.0\"\n"
		if flavor != "" {
			rec += "flavor: " + flavor + "\n"
		}
		if err := os.WriteFile(r.path(name), []byte(rec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("odd", "nosuchdb")
	if _, err := r.Get(context.Background(), "odd"); err == nil || !strings.Contains(err.Error(), `unknown flavor "nosuchdb": use mariadb`) || !strings.Contains(err.Error(), "fix its flavor field") {
		t.Errorf("a record of an unknown flavor: %v", err)
	}
	write("old", "")
	if b, err := r.Get(context.Background(), "old"); err != nil || b.Flavor != MariaDB {
		t.Errorf("a record without a flavor: %v, %q", err, b.Flavor)
	}
}
