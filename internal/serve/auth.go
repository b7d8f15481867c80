package serve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/time/rate"

	"github.com/qpslab/qpslab/internal/store"
)

// The scopes a token may carry.
const (
	ScopeRead   = "read"   // pages and the JSON reads, when they are not public
	ScopeIngest = "ingest" // POST /api/v1/results
	ScopeAdmin  = "admin"  // hide, unhide and delete runs (admin.go)
)

// Scopes are every scope, in the order they are listed.
var Scopes = []string{ScopeRead, ScopeIngest, ScopeTriage, ScopeAdmin}

// A token is "qpslab_<id>_<secret>": the id (12 hex digits) names it in
// lists and logs of the tokens command, the secret (32 random bytes) makes
// it unguessable. Only its SHA-256 is stored: a fast hash is enough for
// 256 random bits (no password to guess), and it lets the store find a
// token by its hash without reading any secret.
var tokenRE = regexp.MustCompile(`^qpslab_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$`)

func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// CheckScopes refuses a scope that is not one of Scopes, and none.
func CheckScopes(scopes []string) error {
	if len(scopes) == 0 {
		return fmt.Errorf("give the token a scope: --scope %s", strings.Join(Scopes, ","))
	}
	for _, sc := range scopes {
		if !slices.Contains(Scopes, sc) {
			return fmt.Errorf("scope %q: a token's scopes are %s", sc, strings.Join(Scopes, ", "))
		}
	}
	return nil
}

// CreateToken makes a token with scopes, stores its hash under name, and
// returns the token itself, which nothing keeps: it is shown once.
func CreateToken(ctx context.Context, st *store.Store, name string, scopes []string, now time.Time) (string, store.Token, error) {
	if strings.TrimSpace(name) == "" {
		return "", store.Token{}, errors.New("name the token (what or who uses it: ci, alice)")
	}
	if err := CheckScopes(scopes); err != nil {
		return "", store.Token{}, err
	}
	var id [6]byte
	var secret [32]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", store.Token{}, fmt.Errorf("make a token: %w", err)
	}
	if _, err := rand.Read(secret[:]); err != nil {
		return "", store.Token{}, fmt.Errorf("make a token: %w", err)
	}
	tok := "qpslab_" + hex.EncodeToString(id[:]) + "_" + base64.RawURLEncoding.EncodeToString(secret[:])
	t := store.Token{ID: hex.EncodeToString(id[:]), Name: name, Scopes: slices.Clone(scopes), Created: now.UTC()}
	if err := st.AddToken(ctx, t, hashToken(tok)); err != nil {
		return "", store.Token{}, err
	}
	return tok, t, nil
}

// auth checks tokens and sessions, and limits failed attempts.
type auth struct {
	s  *Server
	mu sync.Mutex
	// failed holds a limiter per client address that failed to
	// authenticate (the peer: with --trusted-proxy, the client a trusted
	// proxy names), at most maxFailKeys of them. Token ids are no key:
	// they are not secret (403 messages, logs and audit lines show them),
	// so a stranger could spend a victim's attempts.
	failed map[string]*limitEntry
	// ceiling is every address's failures together: guessing from many
	// addresses is bounded too.
	ceiling *rate.Limiter
	// A valid token is never refused for anyone's failures: every token
	// is checked, and the limits only turn a failed attempt's 401 into a
	// 429 (a token's secret, 32 random bytes, cannot be guessed; the
	// limits slow a client that keeps failing and say so).
}

// maxFailKeys bounds the addresses whose failures are counted apart;
// past it, a new address's failures count in the ceiling alone.
const maxFailKeys = 10000

type limitEntry struct {
	lim  *rate.Limiter
	seen time.Time
}

func newAuth(s *Server) *auth {
	return &auth{s: s, failed: map[string]*limitEntry{},
		ceiling: rate.NewLimiter(rate.Every(s.o.FailedAuthCeilingEvery), s.o.FailedAuthCeiling)}
}

// sessionCookie holds a session's random id, never a token.
const sessionCookie = "qpslab_session"

// errAuth is why a request is not let in; status is 401, 403 or 429.
type errAuth struct {
	status int
	msg    string
}

func (e *errAuth) Error() string { return e.msg }

// idRE finds the id a token names, whether or not the rest is well formed.
var idRE = regexp.MustCompile(`^qpslab_([0-9a-f]{12})_`)

// tokenID is the id tok names, for the log ("" for none).
func tokenID(tok string) string {
	if m := idRE.FindStringSubmatch(tok); m != nil {
		return m[1]
	}
	return ""
}

// fail spends one of peer's failed attempts and one of the ceiling's, and
// says why the attempt is answered 429 ("": 401): peer had none left, or
// the ceiling is spent.
func (a *auth) fail(peer string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	e, ok := a.failed[peer]
	if !ok {
		if len(a.failed) >= maxFailKeys { // forget addresses whose limiter has refilled
			for k, v := range a.failed {
				if now.Sub(v.seen) > time.Duration(a.s.o.FailedAuthBurst)*a.s.o.FailedAuthEvery {
					delete(a.failed, k)
				}
			}
		}
		if len(a.failed) < maxFailKeys {
			e = &limitEntry{lim: rate.NewLimiter(rate.Every(a.s.o.FailedAuthEvery), a.s.o.FailedAuthBurst)}
			a.failed[peer] = e
		}
	}
	ceiling := a.ceiling.Allow()
	if e != nil {
		e.seen = now
		if !e.lim.Allow() {
			return "too many failed attempts from this address: wait a minute and try again with a valid token"
		}
	}
	if !ceiling {
		return "too many failed attempts to authenticate on this server: wait a minute and try again with a valid token"
	}
	return ""
}

// check finds the token tok and requires scope of it. A token that is
// malformed, unknown or revoked is a failed attempt, logged with the id
// tried and the peer.
func (a *auth) check(ctx context.Context, r *http.Request, tok, scope string) (store.Token, error) {
	peer := a.s.peer(r)
	id := tokenID(tok)
	if id == "" {
		id = "(none: malformed)"
	}
	failed := func(what string) (store.Token, error) {
		if why := a.fail(peer); why != "" {
			a.s.logf("auth: token id %s from %s: %s, refused: %s", id, peer, what, why)
			return store.Token{}, &errAuth{http.StatusTooManyRequests, why}
		}
		a.s.logf("auth: token id %s from %s: %s", id, peer, what)
		return store.Token{}, &errAuth{http.StatusUnauthorized, "the token is not valid (wrong, revoked or mistyped): create one with qpslab tokens create NAME --scope " + scope}
	}
	if !tokenRE.MatchString(tok) {
		return failed("malformed")
	}
	t, err := a.s.st.TokenByHash(ctx, hashToken(tok))
	if errors.Is(err, store.ErrNoToken) {
		return failed("wrong")
	}
	if err == nil && !t.Revoked.IsZero() {
		return failed("revoked")
	}
	if err != nil {
		return store.Token{}, err
	}
	if !slices.Contains(t.Scopes, scope) {
		return store.Token{}, noScope(t, scope)
	}
	if err := a.s.st.TouchToken(ctx, t.ID, a.s.o.Now()); err != nil {
		a.s.logf("token %s: %v", t.ID, err)
	}
	return t, nil
}

func noScope(t store.Token, scope string) error {
	return &errAuth{http.StatusForbidden, fmt.Sprintf("token %s (%s) has the scope(s) %s, not %s: create one with --scope %s", t.ID, t.Name, strings.Join(t.Scopes, ","), scope, scope)}
}

// bearer is the token of an Authorization: Bearer header ("" for none).
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true // present, but not a bearer token: a failed attempt
	}
	return strings.TrimSpace(tok), true
}

func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// deny answers a request that is not let in: JSON for the API, else a page
// (or the login form, for a page read without a token).
func (a *auth) deny(w http.ResponseWriter, r *http.Request, err error) {
	var e *errAuth
	if !errors.As(err, &e) {
		a.s.serverError(w, r, err)
		return
	}
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="qpslab"`)
	}
	if e.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "60")
	}
	if isAPI(r) {
		apiError(w, e.status, e.msg)
		return
	}
	a.s.errorPage(w, r, e.status, e.msg)
}

// tokenKey is the context key of the token a request was let in with.
type tokenKey struct{}

// tokenOf is the token r was let in with (a bearer token, or the token
// of its session); false when reads are public and r gave none. Handlers
// that record who did something (an audit line, a triage) read it here.
func tokenOf(r *http.Request) (store.Token, bool) {
	t, ok := r.Context().Value(tokenKey{}).(store.Token)
	return t, ok
}

// sessionReads says whether a login session may let r in: a page, or a
// read of the JSON API (GET or HEAD: the pages link their JSON). Never a
// post to the API, so that no page of another site can act in a reader's
// name.
func sessionReads(r *http.Request) bool {
	return !isAPI(r) || r.Method == http.MethodGet || r.Method == http.MethodHead
}

// need lets a request in with a token of scope: a bearer header or, when
// cookie is true, the session /login opened (for a page, or a read of the
// API: sessionReads). It is the one rule every scope's handlers are
// wrapped in (read, ingest and any scope added); every answer it lets
// through or refuses is marked no-store.
func (a *auth) need(scope string, cookie bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		var t store.Token
		var err error
		if tok, given := bearer(r); given {
			t, err = a.check(r.Context(), r, tok, scope)
		} else if c, cerr := r.Cookie(sessionCookie); cerr == nil && cookie && sessionReads(r) {
			t, err = a.session(r.Context(), w, r, c.Value)
			if errors.Is(err, store.ErrNoSession) && isAPI(r) {
				err = &errAuth{http.StatusUnauthorized,
					"the session has ended: log in again at /login, or give Authorization: Bearer TOKEN"}
			} else if errors.Is(err, store.ErrNoSession) {
				a.toLogin(w, r)
				return
			}
			if err == nil && !slices.Contains(t.Scopes, scope) {
				err = noScope(t, scope)
			}
		} else {
			if cookie && !isAPI(r) {
				a.toLogin(w, r)
				return
			}
			what := map[string]string{ScopeRead: "reading", ScopeIngest: "posting results", ScopeTriage: "triage", ScopeAdmin: "hiding and deleting runs"}[scope]
			if what == "" {
				what = "this"
			}
			err = &errAuth{http.StatusUnauthorized, fmt.Sprintf("%s needs a token with the %s scope: Authorization: Bearer TOKEN (qpslab tokens create NAME --scope %s)", what, scope, scope)}
		}
		if err != nil {
			a.deny(w, r, err)
			return
		}
		a.s.extendRead(w)
		h(w, r.WithContext(context.WithValue(r.Context(), tokenKey{}, t)))
	}
}

// legacyCookie held the token itself, before sessions: it is cleared
// wherever a browser still sends it, and never read.
const legacyCookie = "qpslab_token"

// toLogin sends a page read without a good session to the login form.
func (a *auth) toLogin(w http.ResponseWriter, r *http.Request) {
	if _, err := r.Cookie(legacyCookie); err == nil {
		a.s.setCookie(w, r, &http.Cookie{Name: legacyCookie, MaxAge: -1})
	}
	http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

// read lets a read in when reading is public, or with a token of the read
// scope: a bearer header, or (for pages) the session /login opened.
func (a *auth) read(h http.HandlerFunc) http.HandlerFunc {
	guarded := a.need(ScopeRead, true, h)
	return func(w http.ResponseWriter, r *http.Request) {
		if a.s.o.PublicRead {
			// Anyone reads; a login session (opened to triage, say) is
			// still whose the request is, so its token's scopes apply.
			if c, err := r.Cookie(sessionCookie); err == nil && !isAPI(r) {
				if t, err := a.session(r.Context(), w, r, c.Value); err == nil {
					w.Header().Set("Cache-Control", "no-store")
					r = r.WithContext(context.WithValue(r.Context(), tokenKey{}, t))
				} else if errors.Is(err, store.ErrNoSession) {
					a.clearSession(w, r) // it ended: the page is read as anyone's
				}
			}
			h(w, r)
			return
		}
		guarded(w, r)
	}
}

// ingest lets a post in with a bearer token of the ingest scope; never
// with a cookie, so that no page of another site can post in a reader's
// name.
func (a *auth) ingest(h http.HandlerFunc) http.HandlerFunc { return a.need(ScopeIngest, false, h) }

// Sessions: /login opens one for a read token, its cookie holds a random
// id (only its hash is stored); it ends at logout, when its token is
// revoked or deleted, after SessionIdle unused, or SessionMax after it
// was opened.

// session finds the token of the session whose id is id, and records its
// use (at most once a minute); store.ErrNoSession when it has ended.
func (a *auth) session(ctx context.Context, w http.ResponseWriter, r *http.Request, id string) (store.Token, error) {
	hash := hashToken(id)
	se, t, err := a.s.st.SessionByHash(ctx, hash)
	if err != nil {
		return t, err
	}
	now := a.s.o.Now()
	if !se.Revoked.IsZero() || !t.Revoked.IsZero() || !now.Before(se.Expires) || !now.Before(se.LastUsed.Add(a.s.o.SessionIdle)) {
		a.clearSession(w, r)
		return t, store.ErrNoSession
	}
	if now.Sub(se.LastUsed) > time.Minute {
		if err := a.s.st.TouchSession(ctx, hash, now); err != nil {
			a.s.logf("session of token %s: %v", t.ID, err)
		}
	}
	return t, nil
}

func (a *auth) clearSession(w http.ResponseWriter, r *http.Request) {
	a.s.setCookie(w, r, &http.Cookie{Name: sessionCookie, MaxAge: -1})
}

// safeNext is where to go after logging in: a path of this site only,
// else "/". next is as the query or the form gave it, decoded: a browser
// drops tabs and line ends from a URL and reads a backslash as a slash,
// so "/\t/evil.example" (next=/%09/evil.example) is "//evil.example" to
// it, another host; a scheme, a host or user info is another origin too.
func safeNext(next string) string {
	if !localPath(next) {
		return "/"
	}
	return next
}

// localPath says whether s is a path of this site: it starts with one
// slash, holds no control character, backslash or space a browser would
// drop, and parses with neither scheme, host nor user.
func localPath(s string) bool {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return false
	}
	if strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' || unicode.IsSpace(r) }) >= 0 {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil && u.Opaque == "" &&
		strings.HasPrefix(u.Path, "/") && !strings.HasPrefix(u.Path, "//")
}

// login takes a read token from the form (posted from this site's own
// login page: its origin and CSRF token are checked first) and opens a
// session: a random id in an HttpOnly, SameSite=Strict cookie (Secure over
// HTTPS: setCookie), the token itself kept nowhere.
func (a *auth) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !a.s.checkCSRF(w, r) {
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	t, err := a.check(r.Context(), r, tok, ScopeRead)
	if err != nil {
		a.deny(w, r, err)
		return
	}
	var id [32]byte
	if _, err := rand.Read(id[:]); err != nil {
		a.s.serverError(w, r, fmt.Errorf("make a session: %w", err))
		return
	}
	sid := base64.RawURLEncoding.EncodeToString(id[:])
	now := a.s.o.Now()
	if err := a.s.st.AddSession(r.Context(), store.Session{TokenID: t.ID, Created: now, Expires: now.Add(a.s.o.SessionMax)}, hashToken(sid)); err != nil {
		a.s.serverError(w, r, err)
		return
	}
	a.s.logf("login: token id %s (%s) from %s", t.ID, t.Name, a.s.peer(r))
	a.s.setCookie(w, r, &http.Cookie{Name: sessionCookie, Value: sid, MaxAge: int(a.s.o.SessionMax / time.Second)})
	http.Redirect(w, r, safeNext(r.PostForm.Get("next")), http.StatusSeeOther)
}

// logout revokes the session (in the store: its cookie, if kept, no
// longer reads) and clears the cookie.
func (a *auth) logout(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !a.s.checkCSRF(w, r) {
		return
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		hash := hashToken(c.Value)
		if se, _, err := a.s.st.SessionByHash(r.Context(), hash); err == nil {
			if err := a.s.st.RevokeSession(r.Context(), hash, a.s.o.Now()); err != nil {
				a.s.serverError(w, r, err)
				return
			}
			a.s.logf("logout: token id %s from %s", se.TokenID, a.s.peer(r))
		}
	}
	a.clearSession(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// Peers and proxies.

// ParseTrustedProxies reads --trusted-proxy: networks as CIDR (or single
// addresses), comma-separated.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("--trusted-proxy %s: %q is no network: give the proxies' networks as CIDR, comma-separated, e.g. 10.0.0.0/8,192.0.2.7/32", s, f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--trusted-proxy %q: give the proxies' networks as CIDR, e.g. 10.0.0.0/8", s)
	}
	return out, nil
}

// trusted says whether addr is in one of the trusted proxies' networks.
func (s *Server) trusted(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range s.o.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// fromProxy is the address of r's connection, and whether it is a
// trusted proxy's (Options.TrustedProxies): only then are its
// X-Forwarded-For and X-Forwarded-Proto believed.
func (s *Server) fromProxy(r *http.Request) (host string, trusted bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	return host, err == nil && len(s.o.TrustedProxies) > 0 && s.trusted(addr)
}

// https says whether r reached the dashboard over HTTPS: this server's
// TLS, a public URL (--public-url) of https, or a trusted proxy
// (--trusted-proxy) that says so in X-Forwarded-Proto (a TLS proxy passes
// the request on in plain HTTP). Its cookies are Secure then, and its
// answers carry Strict-Transport-Security. Plain HTTP on loopback (no
// certificate, no https public URL) stays usable.
func (s *Server) https(r *http.Request) bool {
	if r.TLS != nil || s.o.Secure || strings.HasPrefix(strings.ToLower(s.o.PublicURL), "https://") {
		return true
	}
	if _, proxy := s.fromProxy(r); !proxy {
		return false
	}
	for _, h := range r.Header.Values("X-Forwarded-Proto") {
		for _, p := range strings.Split(h, ",") {
			if strings.EqualFold(strings.TrimSpace(p), "https") {
				return true
			}
		}
	}
	return false
}

// setCookie sets c as every cookie of this site is: for the whole site,
// HttpOnly, SameSite=Strict, and Secure when r came over HTTPS.
func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) {
	c.Path, c.HttpOnly, c.SameSite, c.Secure = "/", true, http.SameSiteStrictMode, s.https(r)
	http.SetCookie(w, c)
}

// peer is the address a request came from: the connection's, or, when
// that is a trusted proxy's (Options.TrustedProxies), the rightmost
// address in X-Forwarded-For that is not a trusted proxy (a client can
// write any addresses to the header's left; each trusted proxy appends
// the one it saw). Without trusted proxies the header is ignored.
func (s *Server) peer(r *http.Request) string {
	host, proxy := s.fromProxy(r)
	if !proxy {
		return host
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // not an address a proxy wrote: the last trusted hop is the peer
		}
		host = a.Unmap().String()
		if !s.trusted(a) {
			break
		}
	}
	return host
}
