package serve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// send sends req to ts without following redirects, with cookies (each
// "name=value").
func (ts *testServer) send(t testing.TB, req *http.Request, cookies ...string) answer {
	t.Helper()
	for _, c := range cookies {
		if c != "" {
			req.Header.Add("Cookie", c)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// cookieOf is the "name=value" of the cookie name a answer sets ("" for
// none).
func cookieOf(a answer, name string) string {
	for _, sc := range a.header.Values("Set-Cookie") {
		if strings.HasPrefix(sc, name+"=") {
			return strings.Split(sc, ";")[0]
		}
	}
	return ""
}

var csrfInput = regexp.MustCompile(`<input type="hidden" name="csrf" value="([^"]+)">`)

// form is a page's form as a browser holds it: its CSRF field and cookie.
type form struct{ csrf, cookie string }

// loginForm loads /login as a browser would.
func (ts *testServer) loginForm(t testing.TB) form {
	t.Helper()
	a := ts.get(t, "/login")
	m := csrfInput.FindStringSubmatch(a.body)
	c := cookieOf(a, csrfCookie)
	if a.status != 200 || m == nil || c == "" {
		t.Fatalf("the login page: %d, csrf field %v, cookie %q", a.status, m, c)
	}
	return form{m[1], c}
}

// post posts vals (with f's CSRF field, when f.csrf is not "") from
// origin ("" for no Origin header) with cookies.
func (ts *testServer) post(t testing.TB, path string, vals url.Values, f form, origin string, cookies ...string) answer {
	t.Helper()
	vals = maps.Clone(vals) // Set below replaces a key's slice: the caller's stays
	if vals == nil {
		vals = url.Values{}
	}
	if f.csrf != "" {
		vals.Set("csrf", f.csrf)
	}
	req, err := http.NewRequest("POST", ts.URL+path, strings.NewReader(vals.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return ts.send(t, req, append([]string{f.cookie}, cookies...)...)
}

// login logs in with tok through the form, and returns the session
// cookie.
func (ts *testServer) login(t testing.TB, tok string) string {
	t.Helper()
	f := ts.loginForm(t)
	a := ts.post(t, "/login", url.Values{"token": {tok}, "next": {"/"}}, f, ts.URL)
	c := cookieOf(a, sessionCookie)
	if a.status != http.StatusSeeOther || c == "" {
		t.Fatalf("login: %d, cookie %q: %s", a.status, c, a.body)
	}
	return c
}

// page GETs path with cookies.
func (ts *testServer) page(t testing.TB, path string, cookies ...string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ts.send(t, req, cookies...)
}

// toLogin says whether a sends to the login form.
func toLogin(a answer) bool {
	return a.status == http.StatusSeeOther && strings.HasPrefix(a.header.Get("Location"), "/login?next=")
}

// wrongSecret is a well-formed token of id that no token is.
func wrongSecret(id string) string { return "qpslab_" + id + "_" + strings.Repeat("A", 43) }

// Failed attempts are counted against the client's address, never the
// token id tried (ids are not secret: 403 messages, logs and audit lines
// show them), and a valid token is never refused for anyone's failures:
// ten wrong secrets with the victim's id, then one a second, leave the
// victim's token working from the attacker's own address too; a hundred
// garbage ids do not lock out the CI token. A malformed token counts the
// same way. The log names the id and the peer.
func TestFailedAuthNeverLocksOutAValidToken(t *testing.T) {
	ts := start(t, seeded(t), func(o *Options) { o.FailedAuthBurst = 3; o.FailedAuthEvery = time.Hour })
	good := ts.token(t, "ci", ScopeIngest)
	victim := strings.Split(good, "_")[1] // qpslab_<id>_<secret>
	body := resultsJSON(t, []result.Run{stepRun(0, "update-one_range=100", 10)})
	post := func(tok string) answer {
		return ts.do(t, "POST", "/api/v1/results", tok, "application/json", bytes.NewReader(body))
	}
	for i := 0; i < 3; i++ {
		apiErr(t, fmt.Sprintf("wrong secret %d of the victim's id", i+1), post(wrongSecret(victim)), 401, "not valid")
	}
	a := post(wrongSecret(victim))
	apiErr(t, "a 4th wrong secret from the address", a, 429, "too many failed attempts from this address")
	if a.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if a := post(good); a.status != http.StatusCreated {
		t.Errorf("the victim's valid token after 4 wrong secrets of its id: %d, want 201: %s", a.status, a.body)
	}
	for i := 0; i < 100; i++ {
		post(wrongSecret(fmt.Sprintf("%012x", i)))
		post("qpslab_nope")
	}
	if a := post(good); a.status != http.StatusOK { // the run posted again: skipped
		t.Errorf("a valid token after 200 failures from its address: %d, want 200: %s", a.status, a.body)
	}
	apiErr(t, "a malformed token from the limited address", post("qpslab_nope"), 429, "from this address")
	log := ts.log.String()
	for _, want := range []string{"auth: token id " + victim + " from 127.0.0.1: wrong", "auth: token id " + victim + " from 127.0.0.1: wrong, refused: too many",
		"auth: token id (none: malformed) from 127.0.0.1: malformed"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

// Guessing from many addresses is bounded too: past the ceiling of
// failures of all addresses together, a failed attempt from any address is
// answered 429 for a while; a valid token still gets in.
func TestFailedAuthCeiling(t *testing.T) {
	nets, _ := ParseTrustedProxies("127.0.0.0/8")
	ts := start(t, seeded(t), func(o *Options) {
		o.PublicRead, o.FailedAuthBurst, o.FailedAuthEvery = false, 3, time.Hour
		o.FailedAuthCeiling, o.FailedAuthCeilingEvery, o.TrustedProxies = 5, time.Hour, nets
	})
	good := ts.token(t, "reader", ScopeRead)
	from := func(client, tok string) answer {
		req, _ := http.NewRequest("GET", ts.URL+"/api/v1/labels", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("X-Forwarded-For", client)
		return ts.send(t, req)
	}
	for i := 0; i < 5; i++ {
		apiErr(t, "a guess", from(fmt.Sprintf("198.51.100.%d", i+1), wrongSecret(fmt.Sprintf("%012x", i))), 401, "not valid")
	}
	apiErr(t, "a guess from a 6th address", from("198.51.100.77", wrongSecret("0000000000ff")), 429, "on this server")
	for _, client := range []string{"198.51.100.1", "203.0.113.5"} {
		if a := from(client, good); a.status != http.StatusOK {
			t.Errorf("a valid token from %s past the ceiling: %d, want 200: %s", client, a.status, a.body)
		}
	}
}

// --trusted-proxy: networks as CIDR or addresses; anything else is one
// line naming the flag.
func TestParseTrustedProxies(t *testing.T) {
	got, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.7,2001:db8::/32")
	if err != nil || len(got) != 3 || got[0].String() != "10.0.0.0/8" || got[1].String() != "192.0.2.7/32" || got[2].String() != "2001:db8::/32" {
		t.Errorf("parsed %v, %v", got, err)
	}
	for _, bad := range []string{"", "10.0.0.0/33", "proxy.example.com", "10.0.0.0/8,nope"} {
		if _, err := ParseTrustedProxies(bad); err == nil || !strings.Contains(err.Error(), "--trusted-proxy") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// The peer is the connection's address; X-Forwarded-For is read only
// from a trusted proxy, and then its rightmost address that is not a
// trusted proxy's is the client (what the client itself wrote to its left
// does not count).
func TestPeer(t *testing.T) {
	nets, err := ParseTrustedProxies("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		trusted []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		{nil, "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},           // no trusted proxy: spoofed header ignored
		{nets, "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},          // not from the proxy: ignored
		{nets, "10.0.0.2:5000", []string{"198.51.100.1"}, "198.51.100.1"},            // the proxy's client
		{nets, "10.0.0.2:5000", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1"},   // the client's own entry is to the left
		{nets, "10.0.0.2:5000", []string{"198.51.100.1, 10.0.0.3"}, "198.51.100.1"},  // two proxies
		{nets, "10.0.0.2:5000", []string{"6.6.6.6", "198.51.100.1"}, "198.51.100.1"}, // two headers
		{nets, "10.0.0.2:5000", nil, "10.0.0.2"},                                     // no header: the proxy
		{nets, "10.0.0.2:5000", []string{"garbage"}, "10.0.0.2"},
		{nets, "[::ffff:10.0.0.2]:5000", []string{"198.51.100.1"}, "198.51.100.1"},
	} {
		s := &Server{o: Options{TrustedProxies: c.trusted}}
		r := &http.Request{RemoteAddr: c.remote, Header: http.Header{}}
		for _, h := range c.xff {
			r.Header.Add("X-Forwarded-For", h)
		}
		if got := s.peer(r); got != c.want {
			t.Errorf("%v from %s, X-Forwarded-For %q: peer %s, want %s", c.trusted, c.remote, c.xff, got, c.want)
		}
	}
}

// Without --trusted-proxy a client cannot dodge its limit by writing
// X-Forwarded-For; behind a trusted proxy each client has its own.
func TestForwardedForLimits(t *testing.T) {
	bad := func(ts *testServer, xff string) answer {
		req, _ := http.NewRequest("GET", ts.URL+"/api/v1/labels", nil)
		req.Header.Set("Authorization", "Bearer qpslab_nope")
		req.Header.Set("X-Forwarded-For", xff)
		return ts.send(t, req)
	}
	ts := start(t, seeded(t), func(o *Options) { o.PublicRead, o.FailedAuthBurst, o.FailedAuthEvery = false, 2, time.Hour })
	bad(ts, "198.51.100.1")
	bad(ts, "198.51.100.2")
	apiErr(t, "a spoofed X-Forwarded-For without --trusted-proxy", bad(ts, "198.51.100.3"), 429, "too many")

	nets, _ := ParseTrustedProxies("127.0.0.0/8")
	ts = start(t, seeded(t), func(o *Options) {
		o.PublicRead, o.FailedAuthBurst, o.FailedAuthEvery, o.TrustedProxies = false, 2, time.Hour, nets
	})
	bad(ts, "198.51.100.1")
	bad(ts, "198.51.100.1")
	apiErr(t, "a client behind the proxy", bad(ts, "198.51.100.1"), 429, "too many")
	apiErr(t, "another client behind the proxy", bad(ts, "198.51.100.2"), 401, "not valid")
	if log := ts.log.String(); !strings.Contains(log, "auth: token id (none: malformed) from 198.51.100.1") || !strings.Contains(log, "198.51.100.2 GET /api/v1/labels 401") {
		t.Errorf("the log does not name the client behind the proxy:\n%s", log)
	}
}

// /login takes a post from this site's own login page only: another
// origin, no origin at all, or no (or another) CSRF token is refused 403
// and opens no session.
func TestLoginCSRF(t *testing.T) {
	ts := start(t, seeded(t), func(o *Options) { o.PublicRead = false })
	reader := ts.token(t, "reader", ScopeRead)
	vals := url.Values{"token": {reader}, "next": {"/"}}
	f := ts.loginForm(t)
	other := ts.loginForm(t)
	for _, c := range []struct {
		what   string
		f      form
		origin string
		want   string
	}{
		{"from another site", f, "https://evil.example", "not from this site"},
		{"from a page without an origin", f, "null", "not from this site"},
		{"without an Origin or Referer", f, "", "without an Origin or Referer"},
		{"without the CSRF field", form{cookie: f.cookie}, ts.URL, "CSRF token is missing"},
		{"without the CSRF cookie", form{csrf: f.csrf}, ts.URL, "CSRF token is missing"},
		{"with another form's token", form{csrf: other.csrf, cookie: f.cookie}, ts.URL, "CSRF token is missing"},
	} {
		a := ts.post(t, "/login", vals, c.f, c.origin)
		if a.status != http.StatusForbidden || !strings.Contains(a.body, c.want) || cookieOf(a, sessionCookie) != "" {
			t.Errorf("login %s: %d, session %q, want 403 with %q: %s", c.what, a.status, cookieOf(a, sessionCookie), c.want, a.body)
		}
	}
	// A Referer of this site does when a browser sends no Origin.
	req, _ := http.NewRequest("POST", ts.URL+"/login", strings.NewReader(url.Values{"token": {reader}, "next": {"/"}, "csrf": {f.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Referer", ts.URL+"/login?next=%2F")
	if a := ts.send(t, req, f.cookie); a.status != http.StatusSeeOther || cookieOf(a, sessionCookie) == "" {
		t.Errorf("login with a Referer of this site: %d: %s", a.status, a.body)
	}
	if a := ts.post(t, "/login", url.Values{"token": {"qpslab_wrong"}}, f, ts.URL); a.status != 401 || !strings.Contains(a.body, "the token is not valid") {
		t.Errorf("login with a wrong token: %d", a.status)
	}
}

// The session cookie holds a random id, not the token; the session reads
// pages and the API, and never posts; logout revokes it in the store,
// so that the old cookie, kept, no longer reads.
func TestSessionLogout(t *testing.T) {
	ts := start(t, seeded(t), func(o *Options) { o.PublicRead = false })
	reader := ts.token(t, "reader", ScopeRead)
	if a := ts.get(t, "/suites/sysbench"); a.header.Get("Location") != "/login?next=%2Fsuites%2Fsysbench" {
		t.Errorf("a page without a session: %d %s", a.status, a.header.Get("Location"))
	}
	// The cookie of the release before sessions held the token: it is
	// not read, and cleared.
	if a := ts.page(t, "/suites/sysbench", "qpslab_token="+reader); !toLogin(a) || !strings.Contains(a.header.Get("Set-Cookie"), "qpslab_token=; Path=/; Max-Age=0") {
		t.Errorf("a page with the old cookie holding the token: %d, %q", a.status, a.header.Get("Set-Cookie"))
	}
	f := ts.loginForm(t)
	a := ts.post(t, "/login", url.Values{"token": {reader}, "next": {"//evil.example/"}}, f, ts.URL)
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/" {
		t.Errorf("login: %d to %q", a.status, a.header.Get("Location"))
	}
	set := strings.Join(a.header.Values("Set-Cookie"), "\n")
	session := cookieOf(a, sessionCookie)
	secret := tokenSecret(t, reader)
	if session == "" || strings.Contains(set, secret) || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Strict") {
		t.Fatalf("the session cookie: %s", set)
	}
	if a := ts.page(t, "/suites/sysbench", session); a.status != 200 || !strings.Contains(a.body, `action="/logout"`) {
		t.Fatalf("a page with the session: %d", a.status)
	}
	if a := ts.page(t, "/api/v1/labels", session); a.status != 200 {
		t.Errorf("a read of the API with the session: %d, want 200 (the pages link their JSON)", a.status)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/results", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	if a := ts.send(t, req, session); a.status != 401 {
		t.Errorf("a post with the session: %d, want 401", a.status)
	}

	// Logout is a form too: from another site it is refused, and the
	// session lives on.
	page := ts.page(t, "/suites/sysbench", session, f.cookie)
	m := csrfInput.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatal("the page has no logout form with a CSRF field")
	}
	if a := ts.post(t, "/logout", nil, form{m[1], f.cookie}, "https://evil.example", session); a.status != http.StatusForbidden {
		t.Errorf("logout from another site: %d", a.status)
	}
	if a := ts.page(t, "/suites/sysbench", session); a.status != 200 {
		t.Errorf("the session after a refused logout: %d", a.status)
	}
	a = ts.post(t, "/logout", nil, form{m[1], f.cookie}, ts.URL, session)
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/login" || !strings.Contains(a.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("logout: %d to %q, %q", a.status, a.header.Get("Location"), a.header.Get("Set-Cookie"))
	}
	if a := ts.page(t, "/suites/sysbench", session); !toLogin(a) {
		t.Errorf("the old cookie after logout: %d %s, want the login form", a.status, a.header.Get("Location"))
	}
	if log := ts.log.String(); !strings.Contains(log, "login: token id ") || !strings.Contains(log, "logout: token id ") {
		t.Errorf("the log lacks the login and logout:\n%s", log)
	}
}

// Revoking a token ends its sessions (qpslab tokens revoke); a session
// ends after SessionIdle unused, and SessionMax after login however used.
// Sessions are in the store: a second server on it knows them.
func TestSessionsEnd(t *testing.T) {
	st := seeded(t)
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	opts := func(o *Options) {
		o.PublicRead, o.Now, o.SessionIdle, o.SessionMax = false, clock, 12*time.Hour, 20*time.Hour
	}
	ts := start(t, st, opts)
	other := start(t, st, opts)

	alice := ts.token(t, "alice", ScopeRead)
	session := ts.login(t, alice)
	if a := other.page(t, "/suites/sysbench", session); a.status != 200 {
		t.Errorf("the session on another server of the store: %d", a.status)
	}
	advance(11 * time.Hour)
	if a := ts.page(t, "/suites/sysbench", session); a.status != 200 {
		t.Errorf("a session used after 11 h: %d", a.status)
	}
	advance(11 * time.Hour) // 11 h unused, 22 h after login
	if a := ts.page(t, "/suites/sysbench", session); !toLogin(a) {
		t.Errorf("a session 22 h after login (20 h at most): %d", a.status)
	}
	session = ts.login(t, alice)
	advance(13 * time.Hour)
	if a := ts.page(t, "/suites/sysbench", session); !toLogin(a) {
		t.Errorf("a session unused 13 h (12 h at most): %d", a.status)
	}

	session = ts.login(t, alice)
	if _, err := st.RevokeToken(ctx, "alice", clock()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*testServer{ts, other} {
		if a := s.page(t, "/suites/sysbench", session); !toLogin(a) {
			t.Errorf("a session of a revoked token: %d", a.status)
		}
	}
	se, _, err := st.SessionByHash(ctx, hashToken(strings.TrimPrefix(session, sessionCookie+"=")))
	if err != nil || se.Revoked.IsZero() {
		t.Errorf("the session in the store after its token was revoked: %+v %v", se, err)
	}
}

// Every answer of a token-protected read, an ingest and the login is
// Cache-Control: no-store, so no cache keeps what a token read.
func TestNoStore(t *testing.T) {
	ts := start(t, seeded(t), func(o *Options) { o.PublicRead = false })
	reader := ts.token(t, "reader", ScopeRead)
	ingest := ts.token(t, "ci", ScopeIngest)
	session := ts.login(t, reader)
	body := resultsJSON(t, []result.Run{stepRun(0, "update-one_range=100", 10)})
	for what, a := range map[string]answer{
		"a JSON read":         ts.do(t, "GET", "/api/v1/labels", reader, "", nil),
		"a JSON read refused": ts.get(t, "/api/v1/labels"),
		"a page":              ts.page(t, "/suites/sysbench", session),
		"a run's page":        ts.page(t, "/runs", session),
		"the login page":      ts.get(t, "/login"),
		"an ingest":           ts.do(t, "POST", "/api/v1/results", ingest, "application/json", bytes.NewReader(body)),
	} {
		if a.status >= 500 || a.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d, Cache-Control %q", what, a.status, a.header.Get("Cache-Control"))
		}
	}
}

// A client that has not authenticated cannot hold a connection with a
// slow body: the server (as qpslab serve runs it) closes it once
// UnauthReadTimeout has passed, not after the 5-minute read timeout. The
// test waits for the close itself; its own deadline only keeps a failure
// from hanging.
func TestSlowUnauthenticatedBodyCut(t *testing.T) {
	s, err := New(Options{Store: seeded(t), PublicRead: false, UnauthReadTimeout: 300 * time.Millisecond, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	addr := listening(t, s)
	for _, c := range []struct{ what, head string }{
		{"a login form", "POST /login HTTP/1.1\r\nHost: " + addr + "\r\nOrigin: http://" + addr + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\ntoken="},
		{"a post with a wrong token", "POST /api/v1/results HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + wrongSecret("00000000000b") + "\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n{\"runs\":"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, c.head); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		_, err = io.Copy(io.Discard, bufio.NewReader(conn)) // until the server closes
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s sending its body slowly: the connection is still open after %s", c.what, time.Since(start).Round(time.Second))
		}
		conn.Close()
	}
}

// tokenSecret is the secret of tok, qpslab_<id>_<secret>: the 43
// characters after the id (a secret may itself hold '_').
func tokenSecret(t testing.TB, tok string) string {
	t.Helper()
	m := tokenRE.FindStringSubmatch(tok)
	if m == nil {
		t.Fatalf("%q is not a token", tok)
	}
	return m[2]
}
