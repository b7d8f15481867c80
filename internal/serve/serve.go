// Package serve owns qpslab serve: a results dashboard over a store (the
// suites and their tests with the latest relative values, each test's
// history with its change points and the builds where they arrived,
// comparisons of any labels, runs, hosts), its API (versioned JSON reads,
// the ingest of results through the importers of qpslab import, bearer
// tokens with scopes; pages' login sessions, stored, and CSRF-checked
// forms), and webhook alerts when new results bring a
// regression.
//
// It presents what the store, history, analysis and report give: the
// comparison page is the HTML report's sections, the change points are
// qpslab detect's (analysis.Detect, called in detect.go only), cached per
// test and metric and recomputed when the store's generation moves. The
// only figures it computes itself are a long history's per-pixel minimum,
// maximum and mean, so that a chart of 100,000 points stays small.
package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/store"
)

// Options configure a Server.
type Options struct {
	Store *store.Store
	// Settings and Detect are qpslab detect's: the settings file (per-test
	// overrides) and the options every series starts from.
	Settings analysis.DetectSettings
	Detect   changepoint.Options
	// PublicRead lets anyone read pages and the JSON API; otherwise reads
	// need a token with the read scope (a bearer header, or the cookie
	// /login sets).
	PublicRead bool
	// MaxBody is the largest request body accepted, in bytes (default
	// DefaultMaxBody); a tarball may unpack to MaxUnpack (default 4 ×
	// MaxBody).
	MaxBody, MaxUnpack int64
	// TempDir is where a post is unpacked before it is stored, in a
	// folder of its own (atomicfile.TempDir, so that a serve that was
	// killed mid-post leaves it to atomicfile.Sweep); default the
	// system's temporary folder.
	TempDir string
	// Webhook is where alerts are posted ("" for none): a new regression
	// change point of one of AlertMetrics (default qps) whose magnitude is
	// at least AlertThreshold (default 0.05) is posted once.
	Webhook        string
	AlertThreshold float64
	AlertMetrics   []string
	// AlertExisting posts, the first time alerts run on a store, the
	// regressions already stored too; otherwise they are taken as known.
	AlertExisting bool
	// PublicURL is how the dashboard is reached (https://bench.example.com),
	// for the links in alerts and the API's answers; default the address
	// it listens on.
	PublicURL string
	// AllowedHosts are names the dashboard answers to besides PublicURL's
	// host (or, without one, the host it listens on) and the loopback
	// names; a request for any other gets 421 (hosts.go).
	AllowedHosts []string
	// Poll is how often the store is checked for results others stored
	// (qpslab run, import, another serve); default 10 s.
	Poll time.Duration
	// Log receives one line per request and what the server does on its
	// own (alerts, errors); never a token.
	Log io.Writer
	// FailedAuthBurst failed attempts from one client address are
	// answered 401, then one per FailedAuthEvery (defaults 10 and 6 s),
	// and FailedAuthCeiling of all addresses together, then one per
	// FailedAuthCeilingEvery (defaults 100 and 0.6 s); past them a
	// failed attempt is answered 429. A valid token always gets in.
	FailedAuthBurst        int
	FailedAuthEvery        time.Duration
	FailedAuthCeiling      int
	FailedAuthCeilingEvery time.Duration
	// TrustedProxies are the networks of the proxies in front: a request
	// from one of them is from the client X-Forwarded-For names (the
	// rightmost address not of these networks). Without any, the header
	// is ignored.
	TrustedProxies []netip.Prefix
	// SessionIdle ends a login session unused that long (default 12 h);
	// SessionMax ends it that long after login (default 30 days).
	SessionIdle, SessionMax time.Duration
	// UnauthReadTimeout is how long a request that is not yet let in by a
	// token may take to send its body (default 10 s); once a token lets it
	// in, ReadTimeout (default 5 minutes: a large tarball on a slow link).
	UnauthReadTimeout, ReadTimeout time.Duration
	// PublicTriage lets anyone set the attention view's triage states
	// (recorded as by "public"); otherwise triage needs a token with the
	// triage scope.
	PublicTriage bool
	// Secure says the server itself serves over TLS. Its cookies are
	// Secure, and its answers carry Strict-Transport-Security, then, and
	// whenever PublicURL is https or a trusted proxy forwards the request
	// with X-Forwarded-Proto: https (Server.https).
	Secure bool
	// Client posts the webhooks (default: 10 s timeout).
	Client *http.Client
	// Fleet is the fleet of the PostgreSQL store (nil: none, a SQLite
	// store): "bisect this" queues its bisections there.
	Fleet *fleet.Fleet
	// BisectSrc are the git trees bisections walk (--bisect-src): an
	// entry is bisected in the first that has both its commits, at the
	// same path on the agents.
	BisectSrc []string
	// Bisect is "bisect this" (bisect.Dashboard, which the wiring gives:
	// serve imports nothing above it); nil: the entries say nothing of
	// bisecting, and queueing one is refused.
	Bisect Bisector
	// Now is the clock (default time.Now).
	Now func() time.Time
	// PageWait is how long a page waits for an analysis being computed
	// (the attention entries, a suite's tests after a post) before it
	// shows the last one computed with its "as of" time (default 300 ms;
	// negative: as long as it takes).
	PageWait time.Duration
}

// DefaultPageWait is how long a page waits for an analysis by default.
const DefaultPageWait = 300 * time.Millisecond

// DefaultMaxBody is the default limit of a request body: 64 MiB.
const DefaultMaxBody = 64 << 20

// Server is the dashboard and API over one store.
type Server struct {
	o       Options
	st      *store.Store
	mux     *http.ServeMux
	cache   *cache
	att     *attention
	pairs   pairCache // compare's verdicts on builds measured side by side (detect.go)
	auth    *auth
	static  map[string]staticFile
	csrfKey []byte // the HMAC key of CSRF tokens (csrf.go)
	logMu   sync.Mutex
	refresh chan struct{}
	// refreshMu serialises refreshes (a poll and an ingest's).
	refreshMu sync.Mutex
	alertGen  string // the generation whose alerts were all sent
	// hosts are the names it answers to (hosts.go); ListenAndServe adds
	// the listen address's.
	hostsMu sync.Mutex
	hosts   []string
}

// New makes a server; Run keeps its analysis current and sends alerts.
func New(o Options) (*Server, error) {
	if o.Store == nil {
		return nil, errors.New("serve: no store")
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxUnpack <= 0 {
		o.MaxUnpack = 4 * o.MaxBody
	}
	if o.AlertThreshold <= 0 {
		o.AlertThreshold = 0.05
	}
	if len(o.AlertMetrics) == 0 {
		o.AlertMetrics = []string{"qps"}
	}
	if o.Poll <= 0 {
		o.Poll = 10 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.FailedAuthBurst <= 0 {
		o.FailedAuthBurst = 10
	}
	if o.FailedAuthEvery <= 0 {
		o.FailedAuthEvery = 6 * time.Second
	}
	if o.FailedAuthCeiling <= 0 {
		o.FailedAuthCeiling = 100
	}
	if o.FailedAuthCeilingEvery <= 0 {
		o.FailedAuthCeilingEvery = 600 * time.Millisecond
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = 12 * time.Hour
	}
	if o.SessionMax <= 0 {
		o.SessionMax = 30 * 24 * time.Hour
	}
	if o.UnauthReadTimeout <= 0 {
		o.UnauthReadTimeout = 10 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 5 * time.Minute
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PageWait == 0 {
		o.PageWait = DefaultPageWait
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	s := &Server{o: o, st: o.Store, refresh: make(chan struct{}, 1)}
	s.allow(loopbackNames...)
	s.allow(o.AllowedHosts...)
	if u, err := url.Parse(o.PublicURL); err == nil && u.Host != "" {
		s.allow(u.Host)
	}
	s.cache = newCache(s)
	s.att = newAttention()
	s.auth = newAuth(s)
	key, err := o.Store.ServeSecret(context.Background(), csrfSecret)
	if err != nil {
		return nil, err
	}
	s.csrfKey = key
	static, err := staticFiles()
	if err != nil {
		return nil, err
	}
	s.static = static
	s.routes()
	return s, nil
}

// Handler is the server's HTTP handler: every page and endpoint, with the
// security headers, the access log, the body limit, the short read
// deadline of requests not yet let in, and the answer to a name it is not
// reached by (checkHost).
func (s *Server) Handler() http.Handler {
	return s.logged(s.shortRead(s.secured(s.checkHost(s.mux))))
}

// shortRead gives a request with a body UnauthReadTimeout to send it: a
// client that has not authenticated cannot hold a connection open with a
// slow body. A token that lets it in extends the deadline (extendRead).
// Requests without a body keep the server's deadline: a deadline on them
// would end their context while a long page is computed.
func (s *Server) shortRead(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			// Not every ResponseWriter can (a test's recorder): then the
			// server's ReadTimeout is the limit.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.o.UnauthReadTimeout))
		}
		h.ServeHTTP(w, r)
	})
}

// extendRead gives a request a token let in ReadTimeout to send its body.
func (s *Server) extendRead(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.o.ReadTimeout))
}

func (s *Server) logf(format string, a ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.o.Log, s.o.Now().UTC().Format("2006-01-02T15:04:05Z")+" "+format+"\n", a...)
}

// routes are the server's stable addresses: links to them are meant to be
// shared, so they only ever gain parameters.
func (s *Server) routes() {
	m := http.NewServeMux()
	read := s.auth.read
	m.HandleFunc("GET /{$}", read(s.pageHome))
	m.HandleFunc("GET /suites/{suite}", read(s.pageSuite))
	m.HandleFunc("GET /suites/{suite}/tests/{test}", read(s.pageHistory))
	m.HandleFunc("GET /labels", read(s.pageLabels))
	m.HandleFunc("GET /compare", read(s.pageCompare))
	m.HandleFunc("GET /runs", read(s.pageRuns))
	m.HandleFunc("GET /runs/{id}", read(s.pageRun))
	m.HandleFunc("GET /hosts", read(s.pageHosts))
	m.HandleFunc("GET /hosts/{id}", read(s.pageHost))
	m.HandleFunc("GET /alerts", read(s.pageAlerts))
	m.HandleFunc("GET /bisections", read(s.pageBisections))
	m.HandleFunc("GET /bisections/{id}", read(s.pageBisection))
	m.HandleFunc("POST /attention", s.triageAuth(true, s.triageForm))
	m.HandleFunc("POST /attention/bisect", s.triageAuth(true, s.bisectForm))
	m.HandleFunc("GET /login", s.pageLogin)
	m.HandleFunc("POST /login", s.auth.login)
	m.HandleFunc("POST /logout", s.auth.logout)
	m.HandleFunc("GET /static/{file}", s.serveStatic)

	m.HandleFunc("GET /api/v1", read(s.apiIndex))
	m.HandleFunc("GET /api/v1/labels", read(s.apiLabels))
	m.HandleFunc("GET /api/v1/tests", read(s.apiTests))
	m.HandleFunc("GET /api/v1/history", read(s.apiHistory))
	m.HandleFunc("GET /api/v1/changes", read(s.apiChanges))
	m.HandleFunc("GET /api/v1/compare", read(s.apiCompare))
	m.HandleFunc("GET /api/v1/metrics", read(s.apiMetrics))
	m.HandleFunc("GET /api/v1/runs", read(s.apiRuns))
	m.HandleFunc("GET /api/v1/runs/{id}", read(s.apiRun))
	m.HandleFunc("GET /api/v1/alerts", read(s.apiAlerts))
	m.HandleFunc("POST /api/v1/results", s.auth.ingest(s.apiIngest))
	m.HandleFunc("GET /api/v1/attention", read(s.apiAttention))
	m.HandleFunc("POST /api/v1/attention", s.triageAuth(false, s.apiTriage))
	m.HandleFunc("POST /api/v1/attention/{key}/bisect", s.triageAuth(false, s.apiBisect))
	m.HandleFunc("POST /api/v1/runs/{id}/hide", s.auth.admin(s.curateRun(store.Hide)))
	m.HandleFunc("POST /api/v1/runs/{id}/unhide", s.auth.admin(s.curateRun(store.Unhide)))
	m.HandleFunc("DELETE /api/v1/runs/{id}", s.auth.admin(s.curateRun(store.Delete)))
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s %s: GET /api/v1 lists them", r.Method, r.URL.Path))
	})
	s.mux = m
}

// secured sets the headers every answer carries: no script, style or
// frame from elsewhere (and no inline script at all, so that text a user
// stored can never run), no sniffing, no referrer beyond this site.
func (s *Server) secured(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("X-Frame-Options", "DENY")
		if s.https(r) {
			hd.Set("Strict-Transport-Security", "max-age=31536000")
		}
		h.ServeHTTP(w, r)
	})
}

// statusWriter remembers the status and size of an answer for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// logged writes one line per request: the peer (s.peer), method, path (never
// the query, nor any header: a token given in the wrong place stays out of
// the log), status, size and time taken.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		s.logf("%s %s %s %d %dB %s", s.peer(r), r.Method, r.URL.EscapedPath(), sw.status, sw.bytes, time.Since(start).Round(time.Millisecond))
	})
}

// Run keeps the analysis current until ctx ends: it checks the store's
// generation every Poll and after every ingest, recomputes what changed
// and sends the alerts of new regressions.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	for {
		if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
			s.logf("refresh: %v", err)
		}
		// The labels and the attention view of the generation, found
		// now rather than at the next page view (nothing when they are
		// found already).
		if _, err := s.cache.labelInfos(ctx); err != nil && ctx.Err() == nil {
			s.logf("labels: %v", err)
		}
		if _, err := s.attentionEntries(ctx); err != nil && ctx.Err() == nil {
			s.logf("attention: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.refresh:
		}
	}
}

// kick asks Run to refresh now (after an ingest).
func (s *Server) kick() {
	select {
	case s.refresh <- struct{}{}:
	default:
	}
}

// Refresh reads the store's generation; when it moved, the cached
// analysis is dropped and, with a webhook, every test's change points are
// found again and new regressions alerted (again at each refresh while the
// webhook fails, up to maxAttempts per alert).
func (s *Server) Refresh(ctx context.Context) error {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if _, err := s.cache.sync(ctx); err != nil {
		return err
	}
	gen, err := s.cache.generation(ctx)
	if err != nil || s.o.Webhook == "" {
		return err
	}
	// A bisection's answer moves no generation: looked for at each refresh.
	if err := s.bisectAnswers(ctx); err != nil {
		s.logf("bisections: %v", err)
	}
	if gen == s.alertGen {
		return nil
	}
	// Until every alert of this generation is sent (or has had its
	// attempts), each refresh tries again.
	if err := s.alert(ctx); err != nil {
		return err
	}
	s.alertGen = gen
	return nil
}

// Listen is where and how the server listens.
type Listen struct {
	Addr              string // host:port
	CertFile, KeyFile string // TLS; both or neither
	// Insecure allows plain HTTP on an address other hosts can reach.
	Insecure bool
}

// Check refuses what would expose tokens or results unencrypted: plain
// HTTP on an address that is not loopback, unless Insecure; and a
// certificate without its key or the other way round.
func (l Listen) Check() error {
	if (l.CertFile == "") != (l.KeyFile == "") {
		return errors.New("--tls-cert and --tls-key go together: give both (the certificate and its private key) or neither")
	}
	host, _, err := net.SplitHostPort(l.Addr)
	if err != nil {
		return fmt.Errorf("--listen %s: give host:port, e.g. 127.0.0.1:8080 or :8443: %v", l.Addr, err)
	}
	if l.CertFile != "" || l.Insecure || loopback(host) {
		return nil
	}
	what := host
	if what == "" {
		what = "every address"
	}
	return fmt.Errorf("--listen %s listens on %s without TLS: tokens and results would cross the network in clear: give --tls-cert and --tls-key, listen on 127.0.0.1, or say --insecure (behind a TLS proxy)", l.Addr, what)
}

// loopback says whether host names only this machine: localhost or a
// loopback address. Any other name may resolve elsewhere.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ListenAndServe serves s on l until ctx ends, then shuts down within 10
// seconds; ready is called with the address once it listens (the port,
// when l asked for port 0).
func ListenAndServe(ctx context.Context, s *Server, l Listen, ready func(addr string)) error {
	if err := l.Check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: min(10*time.Second, s.o.UnauthReadTimeout),
		// A request's body: UnauthReadTimeout until a token lets it in
		// (shortRead, extendRead), then this.
		ReadTimeout:    s.o.ReadTimeout,
		WriteTimeout:   5 * time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return ctx },
	}
	if l.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(l.CertFile, l.KeyFile)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--tls-cert %s, --tls-key %s: %w", l.CertFile, l.KeyFile, err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	if s.o.PublicURL == "" {
		s.allowListen(l.Addr)
		s.allowListen(ln.Addr().String())
		scheme := "http"
		if l.CertFile != "" {
			scheme = "https"
		}
		s.o.PublicURL = scheme + "://" + publicHost(ln.Addr().String())
	}
	// The first refresh, before anything is posted: the change points
	// already stored are the alerts' baseline.
	if err := s.Refresh(ctx); err != nil {
		s.logf("refresh: %v", err)
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go s.Run(runCtx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fmt.Errorf("serve: shut down: %w", err)
	}
	return nil
}

// publicHost is addr as a link may name it: an address listening on every
// interface is this machine's name.
func publicHost(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil && name != "" {
			host = name
		}
	}
	return net.JoinHostPort(host, port)
}

// PublicURL is how links name the server: Options.PublicURL, or the
// address it listens on once it does.
func (s *Server) PublicURL() string { return s.o.PublicURL }
