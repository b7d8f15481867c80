package serve

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The dashboard answers only to the names it is reached by. A page of
// another site can make a browser send requests to the dashboard by a
// name of its own that it points at the dashboard's address (DNS
// rebinding: evil.example resolves first to the attacker's server, then
// to 127.0.0.1), and read the answers as its own origin's; the Host
// header still names evil.example. So every request whose Host is not an
// allowed name is answered 421 Misdirected Request, before any handler
// (and before a login form could set a cookie for that name), and a form
// is taken only from an origin of an allowed name (sameOrigin).
//
// The allowed names are --public-url's host when it is given, else the
// host it listens on (for every address: this machine's name and
// addresses); the loopback names (localhost, 127.0.0.1, ::1) always, for
// no other site can send a browser to them under its own name; and each
// --allowed-host. Ports are not compared: a name is someone's whatever
// port a page names with it. A request with no Host (HTTP/1.0) is no
// browser's, and is let through.

// loopbackNames are always allowed.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// hostName is the name of host (a Host header or a URL's host: name,
// name:port, [v6]:port) as the allowed list compares it: without its
// port and brackets, a final dot or case.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// allow adds the names of hosts to the allowed list.
func (s *Server) allow(hosts ...string) {
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	for _, h := range hosts {
		if n := hostName(h); n != "" && !slices.Contains(s.hosts, n) {
			s.hosts = append(s.hosts, n)
		}
	}
}

// allowListen adds the names of the address the server listens on, when
// no --public-url names the one it is reached by: the host it names, or,
// for every address, this machine's name and the addresses of its
// interfaces.
func (s *Server) allowListen(addr string) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		s.allow(host)
		return
	}
	if name, err := os.Hostname(); err == nil {
		s.allow(name)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				s.allow(n.IP.String())
			}
		}
	}
}

// hostAllowed says whether host (a Host header, a URL's host) is a name
// the dashboard answers to.
func (s *Server) hostAllowed(host string) bool {
	n := hostName(host)
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	return slices.Contains(s.hosts, n)
}

// allowedHosts are the names the dashboard answers to, for messages.
func (s *Server) allowedHosts() string {
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	return strings.Join(s.hosts, ", ")
}

// checkHost answers 421 to a request whose Host is not an allowed name.
func (s *Server) checkHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "" || s.hostAllowed(r.Host) {
			h.ServeHTTP(w, r)
			return
		}
		msg := fmt.Sprintf("misdirected request: this dashboard answers to %s, not to %s: open it by one of those names, or add this one with qpslab serve --allowed-host %s",
			s.allowedHosts(), shownHost(r.Host), shownHost(hostName(r.Host)))
		if isAPI(r) {
			apiError(w, http.StatusMisdirectedRequest, msg)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, msg, http.StatusMisdirectedRequest)
	})
}

// shownHost is a Host header as a message shows it: quoted when it holds
// what is no part of a name.
func shownHost(h string) string {
	if len(h) > 0 && len(h) <= 255 && strings.IndexFunc(h, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(".-:[]_", r)))
	}) < 0 {
		return h
	}
	if len(h) > 255 {
		h = h[:255]
	}
	return strconv.Quote(h)
}

// CheckAllowedHosts refuses an --allowed-host that is not a host name or
// address (a URL, a path, a space), in one line.
func CheckAllowedHosts(hosts []string) error {
	for _, h := range hosts {
		if net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")) != nil {
			continue
		}
		u, err := url.Parse("http://" + h + "/")
		if err != nil || h == "" || u.Host != h || u.Port() != "" || strings.ContainsAny(h, "/?#@ ") {
			return fmt.Errorf("--allowed-host %s: give a host name or address the dashboard is reached by, without scheme, port or path (e.g. bench.example.com)", shownHost(h))
		}
	}
	return nil
}
