package selector

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/names"
)

// versionRE is what an import's version may be: a version as servers
// print theirs.
var versionRE = regexp.MustCompile(`^[0-9][0-9A-Za-z.+~_-]*$`)

// Source is where an import goes (label: build.config or
// build.config:ENGINE) and what is known of its build: its version, commit
// and when the results were measured (else what its name says). param
// names a parameter as the surface takes it ("--version " for the command,
// "version=" for the API), for the errors.
func Source(label, version, commit, when string, param func(name string) string) (importer.Source, error) {
	if label == "" {
		return importer.Source{}, bad("name the label to file the results under: %sBUILD.CONFIG (e.g. ma100244_rel.cz11a_bee)", param("label"))
	}
	l, err := parseLabelOnly(label)
	if err != nil {
		return importer.Source{}, bad("%s%s: %v", param("label"), label, err)
	}
	// The label names a build and a config the store did not have: the
	// names every command gives them (package names).
	for _, err := range []error{names.Build(l.Build), names.Config(l.Config)} {
		if err != nil { // the label quoted: it may hold what a terminal would act on
			return importer.Source{}, bad("%s%s: %v", param("label"), strconv.Quote(label), err)
		}
	}
	src := importer.Source{Build: l.Build, Config: l.Config, StorageEngine: l.StorageEngine, Version: version, Commit: strings.TrimSpace(commit)}
	if version != "" && !versionRE.MatchString(version) {
		return importer.Source{}, bad("%s%s: give the build's version as its server prints it, e.g. 10.6.17 or 8.0.36", param("version"), version)
	}
	if when != "" {
		if src.Time, err = history.ParseTime(when); err != nil {
			return importer.Source{}, bad("%s%s: give when the results were measured: 2024-03-01, \"2024-03-01 12:00:00\" (UTC), RFC 3339 or unix seconds", param("time"), when)
		}
	}
	return src, nil
}
