package serve

import (
	"context"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/testenv"
)

var nextInput = regexp.MustCompile(`name="next" value="([^"]*)"`)

// After login the dashboard sends the browser on to a path of its own
// only: next= (in the login page's query, then in the form) is taken as
// it is decoded, and a path a browser would read as another origin's (a
// tab, a line end or a backslash it drops or turns into a slash, "//", a
// scheme) becomes "/", both in the form the page renders and in the
// redirect the post answers with. Paths of the site, with their queries,
// are kept.
func TestLoginNextStaysOnTheSite(t *testing.T) {
	ts := start(t, seeded(t), func(o *Options) { o.PublicRead = false })
	reader := ts.token(t, "reader", ScopeRead)
	for _, c := range []struct {
		raw  string // as the query string holds it
		keep bool
	}{
		{"/%09/evil.example", false},
		{"/%0A/evil.example", false},
		{"/%0D/evil.example", false},
		{"/%09%5Cevil.example", false},
		{"%2F%2Fevil.example", false},
		{"//evil.example", false},
		{"/%5C/evil.example", false},
		{"/%5Cevil.example", false},
		{"/%20/evil.example", false},
		{"/%E3%80%80/evil.example", false}, // an ideographic space
		{"https://evil.example/", false},
		{"https:%2F%2Fevil.example", false},
		{"javascript:alert(1)", false},
		{"evil.example", false},
		{"%2Fruns%3Flabel%3Da.b%26suite%3Dsysbench", true},
		{"/suites/sysbench/tests/point-query_range%3D100%3Fmetric%3Dqps", true},
		{"/runs/42", true},
	} {
		decoded, err := url.QueryUnescape(c.raw)
		if err != nil {
			t.Fatal(err)
		}
		want := "/"
		if c.keep {
			want = decoded
		}
		page := ts.get(t, "/login?next="+c.raw)
		m := nextInput.FindStringSubmatch(page.body)
		if page.status != 200 || m == nil {
			t.Fatalf("the login page for next=%s: %d", c.raw, page.status)
		}
		if got := html.UnescapeString(m[1]); got != want {
			t.Errorf("next=%s: the form goes on to %q, want %q", c.raw, got, want)
		}
		a := ts.post(t, "/login", url.Values{"token": {reader}, "next": {decoded}}, ts.loginForm(t), ts.URL)
		if a.status != http.StatusSeeOther || a.header.Get("Location") != want {
			t.Errorf("login with next %q: %d to %q, want %q", decoded, a.status, a.header.Get("Location"), want)
		}
	}
}

// hostGet GETs path from ts with the Host header host.
func hostGet(t *testing.T, ts *testServer, host, path string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	return ts.send(t, req)
}

// A request for a name the dashboard is not reached by (what DNS
// rebinding sends: the attacker's name, pointed at the dashboard's
// address) gets 421 Misdirected Request, a page or JSON, with the names
// it answers to and the flag that adds one, and sets no cookie. The
// names: --public-url's host, each --allowed-host, and the loopback ones
// always, in any case and with any port.
func TestHostAllowList(t *testing.T) {
	ts := start(t, seeded(t), nil) // no --public-url: loopback
	for _, h := range []string{ts.URL[len("http://"):], "localhost:8080", "LOCALHOST.", "127.0.0.1", "[::1]:80"} {
		if a := hostGet(t, ts, h, "/"); a.status != 200 {
			t.Errorf("Host %s: %d", h, a.status)
		}
	}
	a := hostGet(t, ts, "evil.example:8080", "/login")
	if a.status != http.StatusMisdirectedRequest || !strings.Contains(a.body, "answers to localhost, 127.0.0.1, ::1, not to evil.example:8080") ||
		!strings.Contains(a.body, "--allowed-host evil.example") || a.header.Get("Set-Cookie") != "" {
		t.Errorf("Host evil.example: %d %q, cookie %q", a.status, a.body, a.header.Get("Set-Cookie"))
	}
	apiErr(t, "the API for Host evil.example", hostGet(t, ts, "evil.example", "/api/v1/labels"), http.StatusMisdirectedRequest, "--allowed-host evil.example")

	pub := start(t, seeded(t), func(o *Options) {
		o.PublicURL, o.AllowedHosts = "https://bench.example.com", []string{"dash.internal"}
	})
	for h, want := range map[string]int{"bench.example.com": 200, "Bench.Example.Com:443": 200, "dash.internal:8080": 200,
		"127.0.0.1": 200, "evil.example": 421, "bench.example.com.evil.example": 421, "example.com": 421} {
		if a := hostGet(t, pub, h, "/"); a.status != want {
			t.Errorf("with --public-url and --allowed-host: Host %s: %d, want %d", h, a.status, want)
		}
	}
}

// A form is taken only from an origin of a name the dashboard answers to,
// and from the Host it was sent to (or --public-url's): a rebound name
// never reaches the form (421), and an allowed name posting to another
// is refused (403).
func TestCSRFUsesTheHostList(t *testing.T) {
	ts := start(t, seeded(t), func(o *Options) {
		o.PublicRead, o.AllowedHosts = false, []string{"dash.internal", "other.internal"}
	})
	reader := ts.token(t, "reader", ScopeRead)
	formFor := func(host string) form {
		a := hostGet(t, ts, host, "/login")
		m := csrfInput.FindStringSubmatch(a.body)
		if a.status != 200 || m == nil {
			t.Fatalf("the login page by %s: %d", host, a.status)
		}
		return form{m[1], cookieOf(a, csrfCookie)}
	}
	post := func(host, origin string, f form) answer {
		vals := url.Values{"token": {reader}, "next": {"/"}, "csrf": {f.csrf}}
		req, _ := http.NewRequest("POST", ts.URL+"/login", strings.NewReader(vals.Encode()))
		req.Host = host
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		return ts.send(t, req, f.cookie)
	}
	f := formFor("dash.internal")
	if a := post("evil.example", "http://evil.example", f); a.status != http.StatusMisdirectedRequest || cookieOf(a, sessionCookie) != "" {
		t.Errorf("a rebound name's post: %d, session %q", a.status, cookieOf(a, sessionCookie))
	}
	if a := post("dash.internal", "http://evil.example", f); a.status != http.StatusForbidden || !strings.Contains(a.body, "not from this site") {
		t.Errorf("a post from another site: %d", a.status)
	}
	if a := post("dash.internal", "http://other.internal", f); a.status != http.StatusForbidden {
		t.Errorf("a post from another allowed name: %d", a.status)
	}
	if a := post("dash.internal", "http://dash.internal", f); a.status != http.StatusSeeOther || cookieOf(a, sessionCookie) == "" {
		t.Errorf("a post of the dashboard's own page: %d: %s", a.status, a.body)
	}
}

// listening serves s as qpslab serve does, on a free loopback port, until
// the test ends, and returns its address.
func listening(t *testing.T, s *Server) string {
	t.Helper()
	cctx, cancel := context.WithCancel(ctx)
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- ListenAndServe(cctx, s, Listen{Addr: "127.0.0.1:0"}, func(a string) { addrc <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	select {
	case addr := <-addrc:
		return addr
	case err := <-done:
		t.Fatal(err)
	}
	return ""
}

// qpslab serve as it runs, without --public-url: the host it listens on
// and the loopback names are answered, another name is not; listening
// on every address, this machine's name and addresses are answered.
func TestListenHostAllowed(t *testing.T) {
	s, err := New(Options{Store: seeded(t), PublicRead: true, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	addr := listening(t, s)
	_, port, _ := net.SplitHostPort(addr)
	for host, want := range map[string]int{addr: 200, "localhost:" + port: 200, "evil.example:" + port: 421} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	every, err := New(Options{Store: seeded(t), Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	every.allowListen("0.0.0.0:8080")
	name, _ := os.Hostname()
	if !every.hostAllowed(name) || every.hostAllowed("evil.example") {
		t.Errorf("listening on every address: answers to %s", every.allowedHosts())
	}
}

// --allowed-host takes a host name or address, not a URL, a port or a path.
func TestAllowedHostFlag(t *testing.T) {
	if err := CheckAllowedHosts([]string{"bench.example.com", "10.0.0.5", "::1", "[::1]", "dash_1.internal"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"http://bench.example.com", "bench.example.com/x", "bench.example.com:8080", "", "a b", "u@host"} {
		testenv.WantErr(t, CheckAllowedHosts([]string{bad}), "--allowed-host", "without scheme, port or path")
	}
}
