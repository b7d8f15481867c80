package serve

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// The ingest: POST /api/v1/results takes what qpslab import takes, and
// reads it with the same importers into one transaction: all of it is
// stored, or nothing.
//
//	format=results   qpslab's results JSON (qpslab run --out)
//	format=sysbench  one sysbench 1.0/1.1 run output; label=, test=
//	format=mytools   a tarball (.tar or .tar.gz) of a result folder of the
//	                 reference harness, sysbench's or the Insert
//	                 Benchmark's; label=
//
// and, for sysbench and mytools, version=, commit= and time= as qpslab
// import's flags. The body is at most MaxBody bytes, a tarball unpacks to
// at most MaxUnpack, and holds only files and folders.

// The formats of an ingest.
const (
	FormatResults  = "results"
	FormatSysbench = "sysbench"
	FormatMytools  = "mytools"
)

// formatOf is the format named, or the one the Content-Type implies.
func formatOf(r *http.Request) (string, error) {
	if f := r.URL.Query().Get("format"); f != "" {
		switch f {
		case FormatResults, FormatSysbench, FormatMytools:
			return f, nil
		}
		return "", badInput("format=%s: use results (qpslab's results JSON), sysbench (a sysbench run's output) or mytools (a tarball of a reference harness folder)", f)
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		return FormatResults, nil
	case "text/plain":
		return FormatSysbench, nil
	case "application/x-tar", "application/gzip", "application/x-gzip", "application/x-compressed-tar", "application/x-gtar":
		return FormatMytools, nil
	}
	return "", &errUnsupported{fmt.Sprintf("Content-Type %q says nothing qpslab imports: give format=results, sysbench or mytools (or Content-Type application/json, text/plain or application/x-tar)", ct)}
}

type errUnsupported struct{ msg string }

func (e *errUnsupported) Error() string { return e.msg }

type errTooLarge struct{ msg string }

func (e *errTooLarge) Error() string { return e.msg }

// fileRE is what file= may name the output: a file name, no folder.
var fileRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// source reads where an import goes and what is known of its build, as
// qpslab import's --label, --version, --commit and --time.
func source(q map[string][]string) (importer.Source, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	return selector.Source(get("label"), get("version"), get("commit"), get("time"), func(n string) string { return n + "=" })
}

// ingestAnswer is what a post is told.
type ingestAnswer struct {
	Imported int      `json:"imported"`
	Skipped  int      `json:"skipped"` // already stored: no value counts twice
	Labels   []string `json:"labels"`
	Version  string   `json:"version,omitempty"` // the build's, when the import gave or found one
	Warning  string   `json:"warning,omitempty"`
	Links    []string `json:"links"`
}

func (s *Server) apiIngest(w http.ResponseWriter, r *http.Request) {
	format, err := formatOf(r)
	if err != nil {
		s.ingestError(w, r, err)
		return
	}
	q := r.URL.Query()
	for k := range q {
		switch k {
		case "format", "label", "test", "version", "commit", "time", "file":
		default:
			s.ingestError(w, r, badInput("%s= is no parameter of POST /api/v1/results: give format, label, test, version, commit, time or file", k))
			return
		}
	}
	tmp := s.o.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	dir, err := atomicfile.TempDir(tmp, "qpslab-ingest")
	if err != nil {
		s.serverError(w, r, fmt.Errorf("ingest: %w", err))
		return
	}
	defer os.RemoveAll(dir)
	body := http.MaxBytesReader(w, r.Body, s.o.MaxBody)
	runs, err := s.readIngest(r.Context(), format, q, body, dir)
	if err == nil {
		err = importer.Validate(runs) // as qpslab import's: the registries' rules, the figures' bounds
	}
	if err != nil {
		s.ingestError(w, r, err)
		return
	}
	src := "import:results" // qpslab's own results files
	if len(runs) > 0 && runs[0].Params["source"] != "" {
		src = runs[0].Params["source"]
	}
	skipped, err := s.st.Import(r.Context(), runs, store.Meta{Source: src})
	if err != nil {
		// What a post can get wrong, Validate and Decode refused above:
		// the store's failure is the server's, told in its log only.
		s.serverError(w, r, err)
		return
	}
	ans := ingestAnswer{Imported: len(runs) - skipped, Skipped: skipped}
	seen := map[string]bool{}
	for _, run := range runs {
		l := run.Label() // build.config(:engine): what ?label= queries back
		if !seen[l] {
			seen[l] = true
			ans.Labels = append(ans.Labels, l)
			ans.Links = append(ans.Links, s.link(withQuery("/runs", map[string][]string{"label": {l}})))
		}
	}
	if format != FormatResults && len(runs) > 0 {
		if runs[0].Version != "" {
			ans.Version = strings.TrimSpace(runs[0].Flavor + " " + runs[0].Version)
		} else {
			ans.Warning = fmt.Sprintf("build %s has no version (no version=, and its name is not the reference's, such as ma100244 or my8036): its results come after the versioned builds' in history, in name order; post again with version= to place them", runs[0].Build)
		}
	}
	s.logf("ingest: %d run(s) of %s stored, %d already stored", ans.Imported, strings.Join(ans.Labels, ", "), skipped)
	if _, err := s.cache.sync(r.Context()); err != nil {
		s.logf("refresh after ingest: %v", err)
	}
	s.kick()
	status := http.StatusCreated
	if ans.Imported == 0 {
		status = http.StatusOK
	}
	s.apiJSON(w, r, status, ans)
}

// ingestError answers a post that stored nothing: 413 for a body (or a
// tarball's content) too large, 415 for a format not known, 400 for the
// rest of what the post holds (for runs importer.Validate refuses, with
// each problem in "problems"); 500 only for the server's own failures.
func (s *Server) ingestError(w http.ResponseWriter, r *http.Request, err error) {
	var big *errTooLarge
	var mbe *http.MaxBytesError
	var un *errUnsupported
	var pr *importer.Problems
	switch {
	case errors.As(err, &pr):
		// Every problem, one a line, each naming its field and run.
		s.apiJSON(w, r, http.StatusBadRequest, map[string]any{"error": "nothing was stored: " + pr.Error(), "problems": pr.Lines, "more": pr.More})
	case errors.As(err, &mbe):
		apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes: nothing was stored; post the results in parts, or start qpslab serve with a larger --max-body", s.o.MaxBody))
	case errors.As(err, &big):
		apiError(w, http.StatusRequestEntityTooLarge, big.msg)
	case errors.As(err, &un):
		apiError(w, http.StatusUnsupportedMediaType, un.msg)
	default:
		if status(err) == http.StatusBadRequest {
			apiError(w, http.StatusBadRequest, "nothing was stored: "+err.Error())
			return
		}
		s.serverError(w, r, err)
	}
}

// readIngest reads a post's body in its format into runs, with qpslab
// import's importers, under dir, until ctx ends.
func (s *Server) readIngest(ctx context.Context, format string, q map[string][]string, body io.Reader, dir string) ([]result.Run, error) {
	has := func(k string) bool { return len(q[k]) > 0 }
	switch format {
	case FormatResults:
		for _, k := range []string{"label", "test", "version", "commit", "time", "file"} {
			if has(k) {
				return nil, badInput("%s= is for sysbench and mytools posts: a results file names its own labels and builds", k)
			}
		}
		b, err := io.ReadAll(body) // at most MaxBody
		if err != nil {
			return nil, readErr(err)
		}
		f, err := result.Decode(b) // its errors name the field's JSON path, never a file
		if err != nil {
			return nil, badInput("%v", err)
		}
		if len(f.Runs) == 0 {
			return nil, badInput("the results file holds no runs")
		}
		return f.Runs, nil
	case FormatSysbench:
		src, err := source(q)
		if err != nil {
			return nil, err
		}
		test := ""
		if v := q["test"]; len(v) > 0 {
			test = strings.TrimSpace(v[0])
		}
		if test == "" {
			return nil, badInput("name the test the output is of: test=point-query_range=100 (qpslab run sysbench --list-tests lists them)")
		}
		name := "sysbench.txt"
		if v := q["file"]; len(v) > 0 {
			if !fileRE.MatchString(v[0]) {
				return nil, badInput("file=%s: give a file name (letters, digits, '.', '_', '-'), no folder", v[0])
			}
			name = v[0]
		}
		file := filepath.Join(dir, name)
		if err := saveBody(body, file); err != nil {
			return nil, err
		}
		run, err := importer.Sysbench(ctx, file, src, test)
		if err != nil {
			return nil, badInput("%s", hide(err, dir, ""))
		}
		return []result.Run{run}, nil
	case FormatMytools:
		if len(q["test"]) > 0 || len(q["file"]) > 0 {
			return nil, badInput("test= and file= are for sysbench posts: a mytools folder names its tests")
		}
		src, err := source(q)
		if err != nil {
			return nil, err
		}
		root := filepath.Join(dir, "tarball")
		if err := s.untar(body, root); err != nil {
			return nil, err
		}
		// The result folder is the tarball's root (tar -C FOLDER .), or
		// its one folder (tar -C PARENT FOLDER).
		runs, err := importer.Mytools(ctx, root, src)
		if err != nil {
			if sub := oneFolder(root); sub != "" {
				runs, err = importer.Mytools(ctx, sub, src)
			}
		}
		if err != nil {
			return nil, badInput("%s", hide(err, root, "tarball"))
		}
		return runs, nil
	}
	return nil, badInput("format=%s: use results, sysbench or mytools", format)
}

// hide takes the server's temporary folder out of an importer's message:
// the poster knows the file as what it posted.
func hide(err error, dir, as string) string {
	msg := err.Error()
	if as == "" {
		return strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
	}
	return strings.ReplaceAll(msg, dir, as)
}

func saveBody(body io.Reader, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return readErr(err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	return nil
}

// readErr keeps a body too large as it is (413), and calls any other read
// failure the post's.
func readErr(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return badInput("the body could not be read: %v", err)
}

// untar unpacks a tarball (gzip-compressed or not) into root: only files
// and folders, each named inside root, MaxUnpack bytes in all, 100,000
// entries at most. Anything else refuses the whole tarball.
func (s *Server) untar(body io.Reader, root string) error {
	br := bufio.NewReader(body)
	var rd io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return badInput("the tarball's gzip header: %v", err)
		}
		defer gz.Close()
		rd = gz
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	tr := tar.NewReader(rd)
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			if n == 0 {
				return badInput("the tarball is empty: post a tar of the result folder (tar -czf - -C PARENT FOLDER)")
			}
			return nil
		}
		if err != nil {
			if rerr := readErr(err); !errors.As(rerr, new(*errBadInput)) {
				return rerr
			}
			return badInput("the body is not a tarball (tar, or tar.gz): %v", err)
		}
		if n >= 100000 {
			return &errTooLarge{"the tarball holds more than 100000 entries: nothing was stored; post the result folder alone"}
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." {
			continue
		}
		if path.IsAbs(h.Name) || name == ".." || strings.HasPrefix(name, "../") {
			return badInput("the tarball's entry %q is outside its folder: nothing was stored; make the tarball with relative names (tar -czf - -C PARENT FOLDER)", h.Name)
		}
		dst := filepath.Join(root, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return fmt.Errorf("ingest: %w", err)
			}
		case tar.TypeReg:
			total += h.Size
			if h.Size < 0 || total > s.o.MaxUnpack {
				return &errTooLarge{fmt.Sprintf("the tarball unpacks to more than %d bytes: nothing was stored; post the result folder alone", s.o.MaxUnpack)}
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return fmt.Errorf("ingest: %w", err)
			}
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				if errors.Is(err, os.ErrExist) {
					return badInput("the tarball holds %q twice: nothing was stored", h.Name)
				}
				return fmt.Errorf("ingest: %w", err)
			}
			// The header's size bounds the copy: a lying header gets the
			// tar reader's error, not more bytes.
			_, err = io.Copy(f, io.LimitReader(tr, h.Size))
			cerr := f.Close()
			if err != nil {
				if rerr := readErr(err); !errors.As(rerr, new(*errBadInput)) {
					return rerr
				}
				return badInput("the tarball's entry %q could not be read: %v", h.Name, err)
			}
			if cerr != nil {
				return fmt.Errorf("ingest: %w", cerr)
			}
		case tar.TypeXGlobalHeader:
			continue
		default:
			return badInput("the tarball's entry %q is not a file or folder (a link or device): nothing was stored; post files only (tar --dereference)", h.Name)
		}
	}
}

// oneFolder is the one folder root holds, "" when it holds more or less.
func oneFolder(root string) string {
	ents, err := os.ReadDir(root)
	if err != nil || len(ents) != 1 || !ents[0].IsDir() {
		return ""
	}
	return filepath.Join(root, ents[0].Name())
}
