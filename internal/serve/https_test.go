package serve

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// loginWith loads /login and posts a login with tok, each request with
// the headers hd (as a proxy in front would send them), and returns the
// Set-Cookie lines of both answers and the login answer.
func (ts *testServer) loginWith(t *testing.T, tok string, hd http.Header) ([]string, answer) {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+"/login", nil)
	for k, v := range hd {
		req.Header[k] = v
	}
	page := ts.send(t, req)
	m := csrfInput.FindStringSubmatch(page.body)
	if page.status != 200 || m == nil {
		t.Fatalf("the login page: %d: %s", page.status, page.body)
	}
	vals := url.Values{"token": {tok}, "next": {"/"}, "csrf": {m[1]}}
	req, _ = http.NewRequest("POST", ts.URL+"/login", strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", ts.URL)
	for k, v := range hd {
		req.Header[k] = v
	}
	a := ts.send(t, req, cookieOf(page, csrfCookie))
	if a.status != http.StatusSeeOther || cookieOf(a, sessionCookie) == "" {
		t.Fatalf("login: %d: %s", a.status, a.body)
	}
	return append(page.header.Values("Set-Cookie"), a.header.Values("Set-Cookie")...), a
}

// Behind a TLS proxy the request is plain HTTP: a trusted proxy's
// X-Forwarded-Proto: https, or a public URL of https, makes every cookie
// Secure and every answer carry Strict-Transport-Security, as a
// certificate file does. Plain HTTP on loopback keeps cookies a browser
// sends over HTTP; a client's own X-Forwarded-Proto, without
// --trusted-proxy, changes nothing.
func TestSecureBehindTLSProxy(t *testing.T) {
	loopback, err := ParseTrustedProxies("127.0.0.0/8,::1")
	if err != nil {
		t.Fatal(err)
	}
	https := http.Header{"X-Forwarded-Proto": {"https"}, "X-Forwarded-For": {"198.51.100.7"}}
	for _, c := range []struct {
		what   string
		change func(*Options)
		public string // --public-url; "" for the address served
		hd     http.Header
		secure bool
	}{
		{"behind a trusted TLS proxy", func(o *Options) { o.TrustedProxies = loopback }, "", https, true},
		{"behind a trusted proxy chain", func(o *Options) { o.TrustedProxies = loopback }, "",
			http.Header{"X-Forwarded-Proto": {"https, http"}}, true},
		{"with an https public URL", nil, "https://bench.example.com", nil, true},
		{"on plain loopback HTTP", nil, "", nil, false},
		{"with a trusted proxy that says http", func(o *Options) { o.TrustedProxies = loopback }, "",
			http.Header{"X-Forwarded-Proto": {"http"}}, false},
		{"with X-Forwarded-Proto from a client not trusted", nil, "", https, false},
	} {
		t.Run(c.what, func(t *testing.T) {
			ts := start(t, seeded(t), func(o *Options) {
				o.PublicRead = false
				if c.change != nil {
					c.change(o)
				}
			})
			if c.public != "" {
				ts.o.PublicURL = c.public
			}
			cookies, a := ts.loginWith(t, ts.token(t, "reader", ScopeRead), c.hd)
			if len(cookies) < 2 {
				t.Fatalf("cookies set: %q, want the CSRF and the session cookie", cookies)
			}
			for _, sc := range cookies {
				if got := strings.Contains(sc, "; Secure"); got != c.secure {
					t.Errorf("cookie %q: Secure %v, want %v", sc, got, c.secure)
				}
			}
			if got := a.header.Get("Strict-Transport-Security") != ""; got != c.secure {
				t.Errorf("Strict-Transport-Security %q, want it %v", a.header.Get("Strict-Transport-Security"), c.secure)
			}
		})
	}
}

// With --read token, a reader logged in through /login reads the JSON the
// pages link (the attention list's, the API's index) with the session, as
// the pages; the session never posts, and an ended session is told so in
// JSON (no redirect to a form).
func TestSessionReadsTheAPI(t *testing.T) {
	ts := start(t, seeded(t), func(o *Options) { o.PublicRead = false })
	session := ts.login(t, ts.token(t, "reader", ScopeRead, ScopeIngest))
	home := ts.page(t, "/", session)
	if home.status != 200 || !strings.Contains(home.body, `href="/api/v1`) {
		t.Fatalf("the home page links no JSON: %d", home.status)
	}
	for _, p := range []string{"/api/v1", "/api/v1/attention?attention=open", "/api/v1/labels"} {
		a := ts.page(t, p, session)
		if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s with the session: %d %s", p, a.status, a.body)
		}
	}
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/results", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	apiErr(t, "a post with the session", ts.send(t, req, session), 401, "Bearer")
	apiErr(t, "the API without the session", ts.get(t, "/api/v1/labels"), 401, "Bearer")

	if _, err := ts.st.RevokeToken(ctx, "reader", ts.o.Now()); err != nil {
		t.Fatal(err)
	}
	apiErr(t, "the API with an ended session", ts.page(t, "/api/v1/labels", session), 401, "log in again")
}
