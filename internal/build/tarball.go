package build

import (
	"bufio"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Builds from the official binary tarballs of MySQL, Percona Server and
// MariaDB (glibc, x86_64 and aarch64): downloaded with resume, checked
// against the checksum the project publishes beside the tarball (or
// --sha256), unpacked into the cache, and registered with the flavor and
// version the server binary reports.
//
// The catalogue holds URL patterns, never checksums: a checksum written
// here from memory could not be verified, and one fetched beside the
// tarball is the project's own.

// tarballSpecRE is what `builds fetch` takes as a catalogued tarball name.
var tarballSpecRE = regexp.MustCompile(`^(mysql|percona-server|mariadb)-(\d+\.\d+\.\d+)(-\d+(?:\.\d+)?)?$`)

// IsTarballSpec says whether Fetch takes spec from an official tarball: a
// URL, or a catalogued name (mysql-8.0.36, percona-server-8.0.36-28, and
// mariadb-10.11.7 with official set; without it MariaDB's names are
// Maven's).
func IsTarballSpec(spec string, official bool) bool {
	if isURL(spec) {
		return true
	}
	m := tarballSpecRE.FindStringSubmatch(spec)
	return m != nil && (m[1] != "mariadb" || official)
}

func isURL(s string) bool { return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") }

// tarball is one official tarball asked for by name.
type tarball struct {
	product string // mysql, percona-server, mariadb
	flavor  Flavor
	version string // 8.0.36; Percona Server's with its release: 8.0.36-28
	urls    []string
}

// parseTarball maps a catalogued name to the URLs its tarball may have in
// the project's archives, most likely first: every glibc build the host
// can run (newest first) for its architecture, compressed either way,
// the full package before the minimal one. mirror, if set, replaces the
// archives' scheme and host.
func parseTarball(spec, arch, glibc, mirror string) (tarball, error) {
	m := tarballSpecRE.FindStringSubmatch(spec)
	if m == nil {
		return tarball{}, fmt.Errorf("cannot fetch %q: name a tarball such as mysql-8.0.36, percona-server-8.0.36-28 or mariadb-10.11.7 --official, or give its URL", spec)
	}
	t := tarball{product: m[1], version: m[2] + m[3]}
	ver, release := m[2], strings.TrimPrefix(m[3], "-")
	series := ver[:strings.LastIndex(ver, ".")]
	host := func(h, p string) string {
		if mirror != "" {
			return strings.TrimSuffix(mirror, "/") + p
		}
		return h + p
	}
	glibcs := func(all ...string) []string {
		var out []string
		for _, g := range all {
			if glibc == "" || CompareVersions(g, glibc) <= 0 {
				out = append(out, g)
			}
		}
		return out
	}
	switch t.product {
	case "mysql":
		t.flavor = MySQL
		if release != "" {
			return tarball{}, fmt.Errorf("cannot fetch %q: MySQL versions have no release number: mysql-%s", spec, ver)
		}
		// cdn.mysql.com holds the current releases of a series,
		// downloads.mysql.com/archives the older ones.
		for _, g := range glibcs("2.28", "2.17", "2.12", "2.5") {
			for _, ext := range []string{".tar.xz", ".tar.gz"} {
				for _, minimal := range []string{"", "-minimal"} {
					f := "mysql-" + ver + "-linux-glibc" + g + "-" + arch + minimal + ext
					t.urls = append(t.urls, host("https://cdn.mysql.com", "/Downloads/MySQL-"+series+"/"+f),
						host("https://downloads.mysql.com", "/archives/get/p/23/file/"+f))
				}
			}
		}
	case "percona-server":
		t.flavor = MySQL
		if release == "" {
			return tarball{}, fmt.Errorf("cannot fetch %q: Percona Server versions carry a release number, e.g. percona-server-8.0.36-28", spec)
		}
		dir := "/downloads/Percona-Server-" + series + "/Percona-Server-" + t.version + "/binary/tarball/"
		for _, g := range glibcs("2.35", "2.34", "2.31", "2.28", "2.27", "2.17", "2.12") {
			for _, minimal := range []string{"", "-minimal"} {
				f := "Percona-Server-" + t.version + "-Linux." + arch + ".glibc" + g + minimal + ".tar.gz"
				t.urls = append(t.urls, host("https://downloads.percona.com", dir+f))
			}
		}
	case "mariadb":
		t.flavor = MariaDB
		if release != "" {
			return tarball{}, fmt.Errorf("cannot fetch %q: MariaDB versions have no release number: mariadb-%s", spec, ver)
		}
		for _, kind := range []string{"linux-systemd-", "linux-glibc_214-", "linux-"} {
			f := "mariadb-" + ver + "-" + kind + arch + ".tar.gz"
			t.urls = append(t.urls, host("https://archive.mariadb.org", "/mariadb-"+ver+"/bintar-"+kind+arch+"/"+f))
		}
	}
	return t, nil
}

// hostArch is the architecture as the projects name their tarballs.
func hostArch() (string, error) {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64", nil
	case "arm64":
		return "aarch64", nil
	}
	return "", fmt.Errorf("the projects publish binary tarballs for x86_64 and aarch64, and this machine is %s: build the server yourself and qpslab builds add it", runtime.GOARCH)
}

// hostGlibc is the C library's version ("2.36"), or "" when getconf
// cannot tell (every glibc build is then tried).
func hostGlibc(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "getconf", "GNU_LIBC_VERSION").Output()
	if err != nil {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) == 2 && f[0] == "glibc" {
		return f[1]
	}
	return ""
}

// tarballBase is a tarball's file name without its extension: the name of
// its folder in the cache.
func tarballBase(file string) string {
	for _, ext := range []string{".tar.gz", ".tar.xz", ".tgz", ".txz", ".tar"} {
		if b, ok := strings.CutSuffix(file, ext); ok {
			return b
		}
	}
	return file
}

// tarballMark is what a finished tarball unpack records.
type tarballMark struct {
	Source   string `yaml:"source"`   // url or file
	Artifact string `yaml:"artifact"` // the URL or file it came from
	SHA256   string `yaml:"sha256"`
	Verified string `yaml:"verified"` // against what: the published file's URL, or --sha256
}

// fetchTarball is Fetch for official tarballs (IsTarballSpec).
func (r Registry) fetchTarball(ctx context.Context, spec string, o FetchOptions) (Build, error) {
	logf := o.logf
	var want tarball // the product and version asked for by name; empty for a URL
	var urls []string
	if isURL(spec) {
		if o.Official || o.Mirror != "" {
			return Build{}, fmt.Errorf("--official and --mirror choose where a named tarball comes from: a URL says it already")
		}
		urls = []string{spec}
	} else {
		arch, err := hostArch()
		if err != nil {
			return Build{}, err
		}
		if want, err = parseTarball(spec, arch, hostGlibc(ctx), o.Mirror); err != nil {
			return Build{}, err
		}
		urls = want.urls
	}
	if o.Name != "" {
		if err := ValidName(o.Name); err != nil {
			return Build{}, err
		}
	}
	if o.SHA256 != "" && !sha256RE.MatchString(strings.ToLower(o.SHA256)) {
		return Build{}, fmt.Errorf("--sha256 %q is not a SHA-256: give its 64 hex digits", o.SHA256)
	}
	buildsDir, unlock, err := r.lockBuilds(ctx)
	if err != nil {
		return Build{}, err
	}
	defer unlock()

	// Already unpacked: from this URL, or any of the name's candidates, or
	// this file; and, with --sha256, from that very tarball.
	var bases []string
	if o.FromFile != "" {
		bases = []string{tarballBase(filepath.Base(o.FromFile))}
	} else {
		for _, u := range urls {
			bases = append(bases, tarballBase(path.Base(u)))
		}
	}
	var dest string
	var m tarballMark
	for _, b := range bases {
		d := filepath.Join(buildsDir, b)
		raw, err := os.ReadFile(filepath.Join(d, completeMark))
		if err != nil || yaml.Unmarshal(raw, &m) != nil || m.SHA256 == "" {
			continue
		}
		if o.SHA256 != "" && !strings.EqualFold(o.SHA256, m.SHA256) {
			return Build{}, fmt.Errorf("the cache holds %s from another tarball (%s, SHA-256 %s): remove %s to replace it", b, m.Artifact, m.SHA256, d)
		}
		dest = d
		logf("%s is in the cache: %s", spec, dest)
		break
	}
	if dest == "" {
		file, from, err := r.tarballFile(ctx, urls, o, logf)
		if err != nil {
			return Build{}, err
		}
		m = tarballMark{Source: "url", Artifact: from}
		if o.FromFile != "" {
			m.Source = "file"
		}
		if m.SHA256, m.Verified, err = verifyTarball(ctx, file, from, o, logf); err != nil {
			if o.FromFile == "" && !errors.Is(err, errNoPublishedSum) {
				removeDownload(file)
			}
			return Build{}, err
		}
		dest = filepath.Join(buildsDir, tarballBase(filepath.Base(file)))
		logf("unpacking %s into %s", filepath.Base(file), dest)
		if err := unpackBuild(ctx, file, MySQL, dest); err != nil {
			os.RemoveAll(dest)
			if o.FromFile == "" {
				removeDownload(file)
			}
			return Build{}, fmt.Errorf("unpack %s: %w", filepath.Base(file), err)
		}
		raw, _ := yaml.Marshal(m)
		if err := os.WriteFile(filepath.Join(dest, completeMark), raw, 0o644); err != nil {
			os.RemoveAll(dest)
			return Build{}, fmt.Errorf("mark %s complete: %w", dest, err)
		}
		if o.FromFile == "" {
			removeDownload(file) // unpacked and marked: the tarball is not needed again
		}
	}
	b, err := inspectTarball(ctx, dest, want)
	if err != nil {
		return Build{}, fmt.Errorf("%s is unpacked in %s, but: %w", spec, dest, err)
	}
	b.Name = o.Name
	if b.Name == "" {
		b.Name = defaultTarballName(b, spec)
	}
	b.Source, b.Artifact, b.SHA256, b.Added = m.Source, m.Artifact, m.SHA256, time.Now().UTC()
	if err := r.save(b, o.Replace); err != nil {
		return Build{}, err
	}
	return b, nil
}

var (
	sha256RE         = regexp.MustCompile(`^[0-9a-f]{64}$`)
	perconaReleaseRE = regexp.MustCompile(`^-\d+(\.\d+)?$`) // what follows the version in Percona Server's banner
)

// defaultTarballName is a fetched tarball's build name: the name asked for,
// or, for a URL, the product and version its server reports
// (mysql-8.0.36, percona-server-8.0.36-28, mariadb-10.11.7).
func defaultTarballName(b Build, spec string) string {
	if !isURL(spec) {
		return spec
	}
	if b.Flavor != MySQL { // MySQL's tarballs are MySQL's or Percona Server's
		return string(b.Flavor) + "-" + b.Version
	}
	if strings.Contains(b.Banner, "Percona") {
		v := b.Version
		if m := mysqlVerRE.FindStringSubmatch(b.Banner); m != nil && perconaReleaseRE.MatchString(m[2]) {
			v += m[2]
		}
		return "percona-server-" + v
	}
	return "mysql-" + b.Version
}

// inspectTarball finds the server in an unpacked tarball, reads the flavor
// and version it reports and checks that it can start; for a tarball asked
// for by name, that it is that product's and that version.
func inspectTarball(ctx context.Context, dest string, want tarball) (Build, error) {
	l, err := FindLayout(MySQL, dest)
	if err != nil {
		return Build{}, err
	}
	f, ver, banner, err := ReadVersion(ctx, MySQL, l)
	if err != nil {
		if strings.Contains(banner, "error while loading shared libraries") {
			return Build{}, fmt.Errorf("%w: the server needs a library this system lacks: install the package that has it (libaio.so.1: libaio1 or libaio1t64; libnuma.so.1: libnuma1)", err)
		}
		return Build{}, err
	}
	if f != MySQL && f != MariaDB {
		return Build{}, fmt.Errorf("the tarball holds %s %s: qpslab fetches MySQL, Percona Server and MariaDB tarballs", f, ver)
	}
	if err := checkStartable(f, ver, dest, l); err != nil {
		return Build{}, err
	}
	if want.product != "" {
		percona := strings.Contains(banner, "Percona")
		switch {
		case f != want.flavor, want.product == "percona-server" && !percona, want.product == "mysql" && percona:
			return Build{}, fmt.Errorf("asked for %s %s but the tarball's server says %q", want.product, want.version, firstLine(banner))
		case !sameRelease(strings.SplitN(want.version, "-", 2)[0], ver):
			return Build{}, fmt.Errorf("asked for %s %s but the tarball's server reports %s %s", want.product, want.version, f, ver)
		}
	}
	return Build{Flavor: f, Version: ver, Banner: banner, Basedir: dest}, nil
}

// errNoPublishedSum: the project publishes no checksum beside the tarball
// and none was given.
var errNoPublishedSum = errors.New("no published checksum")

// verifyTarball checks file against --sha256, or else against the checksum
// file its project publishes beside it (from, its URL): URL.sha256,
// URL.sha256sum, or the folder's sha256sums.txt or SHA256SUMS. A local file
// without --sha256 is taken as it is (it is the user's). It returns the
// file's SHA-256 and what it was checked against.
func verifyTarball(ctx context.Context, file, from string, o FetchOptions, logf func(string, ...any)) (string, string, error) {
	sum, err := fileSHA256(file)
	if err != nil {
		return "", "", err
	}
	removed := "; the download was removed"
	if o.FromFile != "" {
		removed = "" // the user's file is left as it is
	}
	switch {
	case o.SHA256 != "":
		if !strings.EqualFold(sum, o.SHA256) {
			return "", "", fmt.Errorf("checksum mismatch for %s: SHA-256 is %s, --sha256 says %s: the file is damaged or not the one meant%s", path.Base(from), sum, strings.ToLower(o.SHA256), removed)
		}
		return sum, "--sha256", nil
	case o.FromFile != "":
		return sum, "", nil
	}
	published, where, err := publishedSum(ctx, from)
	if err != nil {
		return "", "", err
	}
	if published == "" {
		md5sum, _ := fileSum(file, md5.New())
		return "", "", fmt.Errorf("%w: %s publishes no checksum file beside %s (MySQL lists MD5s on its download pages): check that its SHA-256 %s (MD5 %s) is the one the project lists, then fetch again with --sha256 %s (the download is kept in %s)",
			errNoPublishedSum, hostOf(from), path.Base(from), sum, md5sum, sum, filepath.Dir(file))
	}
	if !strings.EqualFold(published, sum) {
		return "", "", fmt.Errorf("checksum mismatch for %s: SHA-256 is %s, %s says %s: the download is damaged or not the published file%s", path.Base(from), sum, where, published, removed)
	}
	logf("SHA-256 %s matches %s", sum, where)
	return sum, where, nil
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// publishedSum fetches the SHA-256 published beside the tarball at u: ""
// when there is none.
func publishedSum(ctx context.Context, u string) (sum, where string, err error) {
	base := path.Base(u)
	dir := u[:strings.LastIndex(u, "/")+1]
	for _, c := range []string{u + ".sha256", u + ".sha256sum", dir + "sha256sums.txt", dir + "SHA256SUMS"} {
		body, err := getSmall(ctx, c)
		if err != nil {
			return "", "", err
		}
		if body == nil {
			continue
		}
		if s := sumFor(string(body), base); s != "" {
			return strings.ToLower(s), c, nil
		}
	}
	return "", "", nil
}

var hexSumRE = regexp.MustCompile(`^[0-9A-Fa-f]{64}$`)

// sumFor finds file's SHA-256 in a checksum file: a line "SUM  NAME" or
// "SUM *NAME" (sha256sum's), or a file holding one sum alone.
func sumFor(text, file string) string {
	var lone []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !hexSumRE.MatchString(f[0]) {
			continue
		}
		if len(f) == 1 {
			lone = append(lone, f[0])
			continue
		}
		name := strings.TrimPrefix(f[len(f)-1], "*")
		if name == file || path.Base(name) == file {
			return f[0]
		}
	}
	if len(lone) == 1 {
		return lone[0]
	}
	return ""
}

// httpClient fetches tarballs: timeouts on connecting and on the headers,
// none on the body (a large tarball takes what it takes; a stall is caught
// by stallTimeout).
var httpClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   30 * time.Second,
	ResponseHeaderTimeout: time.Minute,
}}

// stallTimeout ends a download that received nothing for this long.
var stallTimeout = time.Minute

// getSmall GETs a small file (a checksum list): nil when the server has
// none (404, 403, 410).
func getSmall(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, netErr(u, err)
	}
	defer resp.Body.Close()
	if missing(resp.StatusCode) {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: %s", u, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}

func missing(code int) bool {
	return code == http.StatusNotFound || code == http.StatusForbidden || code == http.StatusGone
}

// netErr says, for a request that reached no server, that this machine
// looks offline and what to do instead.
func netErr(u string, err error) error {
	var dns *net.DNSError
	var op *net.OpError
	var ue *url.Error
	if errors.As(err, &dns) || errors.As(err, &op) || (errors.As(err, &ue) && ue.Timeout()) {
		return fmt.Errorf("cannot reach %s (%v): this machine looks offline or cut off from it; download the tarball where there is a connection and pass --from-file FILE --sha256 SUM", hostOf(u), rootCause(err))
	}
	return fmt.Errorf("fetch %s: %w", u, err)
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// tarballFile returns the tarball to unpack and where it came from: the
// --from-file, or a download of the first of urls the server has, resumed
// from what an interrupted fetch left.
func (r Registry) tarballFile(ctx context.Context, urls []string, o FetchOptions, logf func(string, ...any)) (string, string, error) {
	if o.FromFile != "" {
		abs, err := filepath.Abs(o.FromFile)
		if err != nil {
			return "", "", fmt.Errorf("resolve --from-file %s: %w", o.FromFile, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return "", "", fmt.Errorf("read --from-file: %w", err)
		}
		return abs, abs, nil
	}
	dir := filepath.Join(r.Cache, "downloads")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("create %s: %w", dir, err)
	}
	var tried []string
	for _, u := range urls {
		file := filepath.Join(dir, path.Base(u))
		if st, err := os.Stat(file); err == nil && st.Mode().IsRegular() {
			logf("%s was downloaded before: %s", path.Base(u), file)
			return file, u, nil
		}
		ok, err := download(ctx, u, file, logf)
		if err != nil {
			return "", "", err
		}
		if ok {
			return file, u, nil
		}
		tried = append(tried, u)
	}
	if len(tried) == 1 {
		return "", "", fmt.Errorf("%s: not found (404): check the URL", tried[0])
	}
	return "", "", fmt.Errorf("no tarball of that version for this machine in the archives (tried %d URLs, the first %s): check the version, or download the tarball yourself and pass --from-file FILE --sha256 SUM", len(tried), tried[0])
}

// removeDownload removes a download and what is left of it.
func removeDownload(file string) {
	os.Remove(file)
	os.Remove(file + ".part")
}

// download fetches u into file, through file.part: a .part left by an
// interrupted download is resumed with a Range request (started over if
// the server answers with the whole file). It reports false, and leaves
// nothing, when the server has no such file.
func download(ctx context.Context, u, file string, logf func(string, ...any)) (bool, error) {
	part := file + ".part"
	var have int64
	if st, err := os.Stat(part); err == nil {
		have = st.Size()
	}
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(dctx, http.MethodGet, u, nil)
	if err != nil {
		return false, fmt.Errorf("fetch %s: %w", u, err)
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return false, netErr(u, err)
	}
	defer resp.Body.Close()
	flags := os.O_CREATE | os.O_WRONLY
	switch {
	case missing(resp.StatusCode):
		return false, nil
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		if start := contentRangeStart(resp.Header.Get("Content-Range")); start != have {
			return false, fmt.Errorf("fetch %s: the server resumed at byte %d, not %d: remove %s and fetch again", u, start, have, part)
		}
		flags |= os.O_APPEND
		logf("resuming %s at %s", path.Base(u), mb(have))
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		resp.Body.Close()
		os.Remove(part) // the .part is not a prefix of what the server has now
		return download(ctx, u, file, logf)
	case resp.StatusCode == http.StatusOK:
		flags |= os.O_TRUNC
		have = 0
	default:
		return false, fmt.Errorf("fetch %s: %s", u, resp.Status)
	}
	total := int64(-1)
	if resp.ContentLength >= 0 {
		total = have + resp.ContentLength
	}
	logf("downloading %s (%s)", u, mb(total))
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", part, err)
	}
	// A stalled server (no byte for stallTimeout) ends the download.
	stall := time.AfterFunc(stallTimeout, func() { cancel(fmt.Errorf("nothing received for %s", stallTimeout)) })
	defer stall.Stop()
	pr := &progressReader{r: resp.Body, done: have, total: total, logf: logf, name: path.Base(u), onRead: func() { stall.Reset(stallTimeout) }}
	_, cerr := io.Copy(out, pr)
	if err := out.Close(); cerr == nil {
		cerr = err
	}
	if cerr == nil && total >= 0 && pr.done != total {
		cerr = io.ErrUnexpectedEOF
	}
	if cerr != nil {
		why := cerr
		if c := context.Cause(dctx); c != nil {
			why = c
		}
		return false, fmt.Errorf("download of %s interrupted after %s of %s (%v): run the same fetch again to resume from %s", path.Base(u), mb(pr.done), mb(total), why, part)
	}
	if err := os.Rename(part, file); err != nil {
		return false, fmt.Errorf("move %s into place: %w", part, err)
	}
	logf("downloaded %s", path.Base(u))
	return true, nil
}

// contentRangeStart reads the first byte of "bytes START-END/TOTAL".
func contentRangeStart(h string) int64 {
	r, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return -1
	}
	s, _, _ := strings.Cut(r, "-")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func mb(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// progressReader counts what a download read and logs each tenth of it
// (or each 50 MB when the size is unknown).
type progressReader struct {
	r           io.Reader
	done, total int64
	next        int64
	name        string
	logf        func(string, ...any)
	onRead      func()
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.done += int64(n)
		p.onRead()
		step := int64(50 << 20)
		if p.total > 0 {
			step = max(p.total/10, 1)
		}
		if p.next == 0 {
			p.next = (p.done/step + 1) * step
		}
		if p.done >= p.next {
			if p.total > 0 {
				p.logf("  %s: %s of %s (%d%%)", p.name, mb(p.done), mb(p.total), p.done*100/p.total)
			} else {
				p.logf("  %s: %s", p.name, mb(p.done))
			}
			p.next = (p.done/step + 1) * step
		}
	}
	return n, err
}
