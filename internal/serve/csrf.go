package serve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Forms posted from a browser (login, logout, and any form a page adds)
// are checked twice against cross-site requests:
//
//   - their Origin (or, when a browser sends none, their Referer) must be
//     this server's own: a name it answers to (hosts.go), and PublicURL's
//     origin or the Host the request was sent to;
//   - they carry a CSRF token: a hidden field holding an HMAC, under a
//     secret every server sharing the store reads (serve_state), of a random
//     value kept in an HttpOnly, SameSite=Strict cookie of this site. A
//     page of another site can neither read the cookie nor compute the HMAC.
//
// A form adds its field with {{template "csrf" .}} in its template (the
// layout defines it from page.CSRF, which render fills in), and its POST
// handler starts with
//
//	if !s.checkCSRF(w, r) {
//		return
//	}
//
// which answers 403 itself when the check fails, and leaves the form
// parsed (r.PostForm) when it passes.

const (
	csrfCookie = "qpslab_csrf"
	csrfField  = "csrf" // the form field's name
	csrfSecret = "csrf_key"
)

// csrfToken is the CSRF token to put in a form of the page r answers with
// w, setting its cookie when r has none. Call it before writing the
// answer's header (render does).
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(csrfCookie)
	if err != nil || len(c.Value) < 32 {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return ""
		}
		c = &http.Cookie{Name: csrfCookie, Value: base64.RawURLEncoding.EncodeToString(b[:])}
		s.setCookie(w, r, c)
		r.AddCookie(c) // a second form of this answer gets the same token
	}
	return s.csrfMAC(c.Value)
}

func (s *Server) csrfMAC(nonce string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("qpslab csrf\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF checks a form's post: its origin, then its CSRF token against
// its cookie. It parses the form (64 KiB at most) and, when a check fails,
// answers 403 naming what failed and returns false.
func (s *Server) checkCSRF(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Cache-Control", "no-store")
	if err := s.sameOrigin(r); err != nil {
		s.logf("csrf: %s %s from %s refused: %v", r.Method, r.URL.EscapedPath(), s.peer(r), err)
		s.errorPage(w, r, http.StatusForbidden, err.Error())
		return false
	}
	if r.PostForm == nil {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			s.errorPage(w, r, http.StatusBadRequest, "the form could not be read: "+err.Error())
			return false
		}
	}
	c, err := r.Cookie(csrfCookie)
	got := r.PostForm.Get(csrfField)
	if err != nil || got == "" || !hmac.Equal([]byte(got), []byte(s.csrfMAC(c.Value))) {
		s.logf("csrf: %s %s from %s refused: no valid CSRF token", r.Method, r.URL.EscapedPath(), s.peer(r))
		s.errorPage(w, r, http.StatusForbidden, "the form's CSRF token is missing or stale: load the page again and send the form from it")
		return false
	}
	return true
}

// sameOrigin refuses a post whose Origin (or Referer, when there is no
// Origin) is not this server: a name it answers to (the allowed hosts that
// checkHost lets in), and PublicURL's origin or the host the request was
// sent to. A post that names neither is refused too: every browser sends
// an Origin with a form's POST.
func (s *Server) sameOrigin(r *http.Request) error {
	from := r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	if from == "" {
		return fmt.Errorf("the form was posted without an Origin or Referer header: send it from this site's page (%s)", s.origin(r))
	}
	u, err := url.Parse(from)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("the form was posted from %q, not from this site (%s): send it from this site's page", from, s.origin(r))
	}
	if !s.hostAllowed(u.Host) {
		return fmt.Errorf("the form was posted from %s, not from this site (a name it answers to: %s): send it from this site's page", u.Scheme+"://"+u.Host, s.allowedHosts())
	}
	if pub, err := url.Parse(s.o.PublicURL); err == nil && pub.Host != "" && strings.EqualFold(pub.Scheme, u.Scheme) && strings.EqualFold(pub.Host, u.Host) {
		return nil
	}
	// The Host the request was sent to; over TLS only from https (behind
	// a TLS proxy, the request itself is plain HTTP).
	if strings.EqualFold(u.Host, r.Host) && (r.TLS == nil || u.Scheme == "https") {
		return nil
	}
	return fmt.Errorf("the form was posted from %s, not from this site (%s): send it from this site's page", u.Scheme+"://"+u.Host, s.origin(r))
}

// origin names this server's origin in messages.
func (s *Server) origin(r *http.Request) string {
	if s.o.PublicURL != "" {
		return s.o.PublicURL
	}
	return r.Host
}
