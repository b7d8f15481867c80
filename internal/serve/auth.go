package serve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

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
var Scopes = []string{ScopeRead, ScopeIngest, ScopeAdmin}

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

// auth checks tokens and limits failed attempts per address.
type auth struct {
	s  *Server
	mu sync.Mutex
	// failed holds a limiter per address that failed to authenticate: a
	// wrong or revoked token, or a malformed one, spends one of its tokens;
	// an address with none left is answered 429 before its token is read.
	failed map[string]*limitEntry
}

type limitEntry struct {
	lim  *rate.Limiter
	seen time.Time
}

func newAuth(s *Server) *auth { return &auth{s: s, failed: map[string]*limitEntry{}} }

const cookieName = "qpslab_token"

// errAuth is why a request is not let in; status is 401, 403 or 429.
type errAuth struct {
	status int
	msg    string
}

func (e *errAuth) Error() string { return e.msg }

// limited says whether ip has spent its failed attempts.
func (a *auth) limited(ip string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.failed[ip]
	return ok && e.lim.Tokens() < 1
}

// fail spends one of ip's failed attempts.
func (a *auth) fail(ip string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	e, ok := a.failed[ip]
	if !ok {
		if len(a.failed) > 10000 { // forget addresses whose limiter has refilled
			for k, v := range a.failed {
				if now.Sub(v.seen) > time.Duration(a.s.o.FailedAuthBurst)*a.s.o.FailedAuthEvery {
					delete(a.failed, k)
				}
			}
		}
		e = &limitEntry{lim: rate.NewLimiter(rate.Every(a.s.o.FailedAuthEvery), a.s.o.FailedAuthBurst)}
		a.failed[ip] = e
	}
	e.seen = now
	e.lim.Allow()
}

// check finds the token tok and requires scope of it. A token that is
// malformed, unknown or revoked is a failed attempt.
func (a *auth) check(ctx context.Context, ip, tok, scope string) (store.Token, error) {
	if a.limited(ip) {
		return store.Token{}, &errAuth{http.StatusTooManyRequests, "too many failed attempts to authenticate from this address: wait a minute and try again with a valid token"}
	}
	bad := &errAuth{http.StatusUnauthorized, "the token is not valid (wrong, revoked or mistyped): create one with qpslab tokens create NAME --scope " + scope}
	if !tokenRE.MatchString(tok) {
		a.fail(ip)
		return store.Token{}, bad
	}
	t, err := a.s.st.TokenByHash(ctx, hashToken(tok))
	if errors.Is(err, store.ErrNoToken) || (err == nil && !t.Revoked.IsZero()) {
		a.fail(ip)
		return store.Token{}, bad
	}
	if err != nil {
		return store.Token{}, err
	}
	if !slices.Contains(t.Scopes, scope) {
		return store.Token{}, &errAuth{http.StatusForbidden, fmt.Sprintf("token %s (%s) has the scope(s) %s, not %s: create one with --scope %s", t.ID, t.Name, strings.Join(t.Scopes, ","), scope, scope)}
	}
	if err := a.s.st.TouchToken(ctx, t.ID, a.s.o.Now()); err != nil {
		a.s.logf("token %s: %v", t.ID, err)
	}
	return t, nil
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

// read lets a read in when reading is public, or with a token of the read
// scope: a bearer header, or (for pages) the cookie /login sets.
func (a *auth) read(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.s.o.PublicRead {
			h(w, r)
			return
		}
		tok, given := bearer(r)
		if !given {
			if c, err := r.Cookie(cookieName); err == nil && !isAPI(r) {
				tok, given = c.Value, true
			}
		}
		if !given {
			if isAPI(r) {
				a.deny(w, r, &errAuth{http.StatusUnauthorized, "reading needs a token with the read scope: Authorization: Bearer TOKEN (qpslab tokens create NAME --scope read)"})
				return
			}
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if _, err := a.check(r.Context(), clientIP(r), tok, ScopeRead); err != nil {
			a.deny(w, r, err)
			return
		}
		h(w, r)
	}
}

// ingest lets a post in with a bearer token of the ingest scope; never
// with a cookie, so that no page of another site can post in a reader's
// name.
func (a *auth) ingest(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, given := bearer(r)
		if !given {
			a.deny(w, r, &errAuth{http.StatusUnauthorized, "posting results needs a token with the ingest scope: Authorization: Bearer TOKEN (qpslab tokens create NAME --scope ingest)"})
			return
		}
		if _, err := a.check(r.Context(), clientIP(r), tok, ScopeIngest); err != nil {
			a.deny(w, r, err)
			return
		}
		h(w, r)
	}
}

// safeNext is where to go after logging in: a path of this site only.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

// login takes a read token from the form and keeps it in an HttpOnly,
// SameSite=Strict cookie (Secure over TLS).
func (a *auth) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		a.s.errorPage(w, r, http.StatusBadRequest, "the login form could not be read: "+err.Error())
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	if _, err := a.check(r.Context(), clientIP(r), tok, ScopeRead); err != nil {
		a.deny(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: tok, Path: "/", HttpOnly: true, Secure: a.s.o.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: 30 * 24 * 3600})
	http.Redirect(w, r, safeNext(r.PostForm.Get("next")), http.StatusSeeOther)
}

func (a *auth) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, Secure: a.s.o.Secure, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
