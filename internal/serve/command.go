package serve

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// Command is qpslab serve's flags as given, checked by Run.
type Command struct {
	Listen        Listen
	Read          string // public or token
	Triage        string // public or token
	Webhook       string // "" and not WebhookGiven: $QPSLAB_WEBHOOK
	WebhookGiven  bool
	PublicURL     string
	Settings      string // the detect settings file ("": the home's)
	SettingsGiven bool
	MaxBody       string // a size, 64MiB
	Threshold     float64
	Metrics       []string
	AlertExisting bool
	Poll          time.Duration
	TrustedProxy  string   // CIDR[,CIDR]: the proxies whose X-Forwarded-For names the client
	BisectSrc     []string // git trees "bisect this" walks
	AllowedHosts  []string // names it answers to besides --public-url's (or the listen host) and loopback's
	// Bisect is "bisect this" (Options.Bisect), which the wiring gives.
	Bisect Bisector
}

// Run checks c (one error naming the flag and the fix), opens the store
// (dsn: --store; "" for the home's) and serves it until ctx ends.
func (c Command) Run(ctx context.Context, h home.Home, dsn string, errw io.Writer) error {
	if err := c.Listen.Check(); err != nil {
		return err
	}
	if c.Read != "public" && c.Read != "token" {
		return fmt.Errorf("--read %s: use public (anyone may read) or token (reads need a token with the read scope)", c.Read)
	}
	if c.Triage != "public" && c.Triage != "token" {
		return fmt.Errorf("--triage %s: use token (triage needs a token with the triage scope) or public (anyone may triage)", c.Triage)
	}
	if !c.WebhookGiven {
		c.Webhook = os.Getenv("QPSLAB_WEBHOOK")
	}
	if c.Webhook != "" {
		u, err := url.Parse(c.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--webhook: give the http(s) URL of an incoming webhook (Slack, Mattermost, or any that takes JSON)")
		}
	}
	if !(c.Threshold > 0 && c.Threshold < 10) {
		return fmt.Errorf("--alert-threshold %g: give the smallest relative change that alerts, e.g. 0.05 for 5 %%", c.Threshold)
	}
	limit, err := humanize.ParseBytes(c.MaxBody)
	if err != nil || limit < 1024 || limit > 1<<40 {
		return fmt.Errorf("--max-body %s: give a size from 1KiB to 1TiB, e.g. 64MiB", c.MaxBody)
	}
	if c.Poll < time.Second {
		return fmt.Errorf("--poll %s: give 1s or more", c.Poll)
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--public-url %s: give how the dashboard is reached, e.g. https://bench.example.com", c.PublicURL)
		}
	}
	if err := CheckAllowedHosts(c.AllowedHosts); err != nil {
		return err
	}
	var proxies []netip.Prefix
	if c.TrustedProxy != "" {
		if proxies, err = ParseTrustedProxies(c.TrustedProxy); err != nil {
			return err
		}
	}
	if c.Settings == "" {
		c.Settings = h.DetectSettings()
	}
	settings, err := analysis.LoadDetectSettings(c.Settings, c.SettingsGiven)
	if err != nil {
		return err
	}
	base, err := settings.Resolve(analysis.Tuning{}, c.Settings)
	if err != nil {
		return err
	}
	for _, m := range c.Metrics {
		if _, err := result.MetricNamed(m); err != nil {
			return fmt.Errorf("--alert-metric %s: use one of %s", m, result.MetricNames())
		}
	}
	var srcs []string
	for _, src := range c.BisectSrc {
		abs, err := filepath.Abs(src)
		if err != nil || !build.IsGitTree(ctx, abs) {
			return fmt.Errorf("--bisect-src %s is not a git tree: "+
				"give a git checkout whose commits the builds were compiled from", src)
		}
		srcs = append(srcs, abs)
	}
	// Posts are unpacked in the home, where the next serve removes what
	// one that was killed mid-post left (a home it cannot write leaves
	// them to the system's temporary folder).
	tmp := h.Ingest()
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		tmp = ""
	} else if _, err := atomicfile.Sweep(tmp); err != nil {
		fmt.Fprintf(errw, "qpslab serve: remove what a killed serve left in %s: %s\n", tmp, strings.Join(strings.Fields(err.Error()), " "))
	}
	st, err := store.Open(ctx, dsn, h.StoreFile())
	if err != nil {
		return err
	}
	defer st.Close()
	var fl *fleet.Fleet
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if fl, err = fleet.Open(ctx, dsn, st.Where()); err != nil {
			return err
		}
		defer fl.Close()
	}
	srv, err := New(Options{
		Fleet: fl, BisectSrc: srcs, Bisect: c.Bisect,
		Store: st, Settings: settings, Detect: base, PublicRead: c.Read == "public", PublicTriage: c.Triage == "public",
		MaxBody: int64(limit), TempDir: tmp, Webhook: c.Webhook, AlertThreshold: c.Threshold, AlertMetrics: c.Metrics, AlertExisting: c.AlertExisting,
		PublicURL: c.PublicURL, AllowedHosts: c.AllowedHosts, Poll: c.Poll, Log: errw, Secure: c.Listen.CertFile != "", TrustedProxies: proxies,
	})
	if err != nil {
		return err
	}
	return ListenAndServe(ctx, srv, c.Listen, func(addr string) {
		reads := "reads are public"
		if c.Read == "token" {
			reads = "reads need a token with the read scope"
		}
		alerts := "no webhook"
		if c.Webhook != "" {
			alerts = fmt.Sprintf("alerts of %s regressions of %g%% or more to the webhook", strings.Join(c.Metrics, ","), 100*c.Threshold)
		}
		fmt.Fprintf(errw, "qpslab serve: %s (listening on %s) over %s; %s; %s\n", srv.PublicURL(), addr, st.Where(), reads, alerts)
	})
}

// Tokens does one of qpslab tokens' commands (create, list, revoke) on
// the store (dsn: --store; "" for the home's): create prints the new
// token once on out and what it is on errw.
func Tokens(ctx context.Context, h home.Home, dsn, do string, args, scopes []string, out, errw io.Writer) error {
	if do == "create" {
		if err := CheckScopes(scopes); err != nil {
			return err
		}
	}
	st, err := store.Open(ctx, dsn, h.StoreFile())
	if err != nil {
		return err
	}
	defer st.Close()
	switch do {
	case "create":
		tok, t, err := CreateToken(ctx, st, args[0], scopes, time.Now())
		if err != nil {
			return err
		}
		fmt.Fprintln(out, tok)
		fmt.Fprintf(errw, "token %s (%s, scopes %s) created in %s: it is shown this once; keep it in your CI's secrets\n", t.ID, t.Name, strings.Join(t.Scopes, ","), st.Where())
		return nil
	case "revoke":
		t, err := st.RevokeToken(ctx, args[0], time.Now())
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "token %s (%s) revoked\n", t.ID, t.Name)
		return nil
	}
	ts, err := st.Tokens(ctx)
	if err != nil {
		return err
	}
	return report.Print(out, store.TokensTable(ts), "text")
}
