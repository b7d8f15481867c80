package build

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/table"
)

// ListTable is qpslab builds list: each build's name, flavor, version,
// source, the options it was compiled with beyond its recipe's
// (--cmake-option; "-" for none) and basedir (a build named by its
// program: the program).
func ListTable(bs []Build) *table.Table {
	t := table.New("NAME", "FLAVOR", "VERSION", "SOURCE", "OPTIONS", "BASEDIR")
	for _, b := range bs {
		where := b.Basedir
		if b.Program != "" {
			where = b.Program
		}
		opts := strings.Join(b.CMakeOptions, " ")
		if opts == "" {
			opts = "-"
		}
		t.Add(b.Name, string(b.Flavor), b.Version, b.Source, opts, where)
	}
	return t
}

// Offer is what one source offers of one flavor: the versions it lists (a
// Debian suite's server package), or a note where it lists none (an
// official tarball is fetched by name and found by trying).
type Offer struct {
	Source, Flavor, Where string
	Versions              []string
	Example               string
}

// Available is what each source offers (qpslab builds list --available):
// Maven Central's artifacts of MariaDB and PostgreSQL (their
// maven-metadata.xml), Debian's suites' MySQL and MariaDB servers (their
// package lists, read at most once a day), Debian's suites' RocksDB
// sources (their source indexes: compiled with builds source and builds
// compile), and the official tarballs
// (listed by no index: named). A source that cannot be read says why in
// its row rather than failing the list.
func (r Registry) Available(ctx context.Context, logf func(string, ...any)) []Offer {
	var out []Offer
	for _, f := range []Flavor{MariaDB, Postgres} {
		a, err := ParseArtifact(string(f) + "-1.0")
		if err != nil {
			continue
		}
		o := Offer{Source: "maven", Flavor: string(f), Where: a.Group + ":" + a.ID}
		if mvn, err := exec.LookPath("mvn"); err != nil {
			o.Where += " (no mvn here: make setup installs it)"
		} else if have, err := registryVersions(ctx, mvn, filepath.Join(r.Cache, "maven"), a); err != nil {
			o.Where += " (" + err.Error() + ")"
		} else {
			slices.SortFunc(have, CompareVersions)
			o.Versions = have
			o.Example = "qpslab builds fetch " + string(f) + "-" + have[len(have)-1]
		}
		out = append(out, o)
	}
	for _, f := range []Flavor{MySQL, MariaDB} {
		picks, err := r.DebianAvailable(ctx, f, "", logf)
		if err != nil {
			out = append(out, Offer{Source: "debian", Flavor: string(f), Where: "Debian's suites (" + err.Error() + ")"})
			continue
		}
		for _, s := range DebianSuites {
			o := Offer{Source: "debian", Flavor: string(f), Where: "Debian " + s}
			for _, p := range picks {
				if p.Suite == s {
					o.Versions = append(o.Versions, p.Upstream()+" ("+p.Package+")")
					o.Example = "qpslab builds fetch " + string(f) + "-" + p.Upstream() + " --from debian"
				}
			}
			if len(o.Versions) > 0 {
				out = append(out, o)
			}
		}
	}
	for f := range debianSourcePackages {
		picks, err := r.DebianSourceVersions(ctx, f, "", logf)
		if err != nil {
			out = append(out, Offer{Source: "debian-src", Flavor: string(f), Where: "Debian's suites (" + err.Error() + ")"})
			continue
		}
		for _, s := range DebianSuites {
			o := Offer{Source: "debian-src", Flavor: string(f), Where: "Debian " + s + " (source: builds source, then builds compile its tarball)"}
			for _, p := range picks {
				if p.Suite == s {
					o.Versions = append(o.Versions, p.Upstream()+" ("+p.Package+"="+p.Version+")")
					o.Example = "qpslab builds source " + p.Package + "=" + p.Version + " --suite " + s + " --into DIR"
				}
			}
			if len(o.Versions) > 0 {
				out = append(out, o)
			}
		}
	}
	for _, t := range []struct{ product, where, example string }{
		{"mysql", "cdn.mysql.com, downloads.mysql.com/archives", "qpslab builds fetch mysql-8.0.36 --from tarball"},
		{"percona-server", "downloads.percona.com", "qpslab builds fetch percona-server-8.0.36-28"},
		{"mariadb", "archive.mariadb.org", "qpslab builds fetch mariadb-10.11.7 --official"},
	} {
		out = append(out, Offer{Source: "tarball", Flavor: t.product, Where: t.where + " (any version the archive has: fetched by name)", Example: t.example})
	}
	return out
}

// AvailableTable is qpslab builds list --available: a row per source and
// flavor, its versions (the newest five, and how many more), and a fetch.
func AvailableTable(offers []Offer) *table.Table {
	t := table.New("SOURCE", "FLAVOR", "WHERE", "VERSIONS", "FETCH")
	for _, o := range offers {
		vs := o.Versions
		more := ""
		if len(vs) > 5 {
			more = fmt.Sprintf(" and %d older", len(vs)-5)
			vs = vs[len(vs)-5:]
		}
		versions := strings.Join(vs, ", ") + more
		if versions == "" {
			versions = "-"
		}
		example := o.Example
		if example == "" {
			example = "-"
		}
		t.Add(o.Source, o.Flavor, o.Where, versions, example)
	}
	return t
}

// RuntimeNotes are a line per build that runs on a C library other than
// the host's (a Debian suite's, through its loader), for qpslab host check:
// what such a build measures includes its own C library's.
func RuntimeNotes(bs []Build) []string {
	var out []string
	for _, b := range bs {
		if b.Runtime != "" {
			out = append(out, fmt.Sprintf("build %s (%s %s) runs on %s, not this host's C library", b.Name, b.Flavor, b.Version, b.Runtime))
		}
	}
	return out
}
