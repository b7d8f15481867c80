package serve

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/qpslab/qpslab/internal/testenv"
)

// With --read token, in a real browser: a page sends to the login form;
// logging in through it (its Origin and CSRF token checked as any
// browser's post is) opens the page asked for; logging out ends the
// session, and the page asks to log in again.
func TestBrowserLoginLogout(t *testing.T) {
	ts := start(t, seeded(t), func(o *Options) { o.PublicRead = false })
	reader := ts.token(t, "reader", ScopeRead)
	bctx := browser(t)

	// at waits until the browser is at path (with a query starting with
	// query, when not ""), and its page's script ran.
	at := func(path, query string) {
		t.Helper()
		testenv.WaitFor(t, time.Minute, "the browser at "+path, func() bool {
			ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
			defer cancel()
			loc, err := chromedp.Run(ctx, chromedp.Location())
			if err != nil && navigating(err) {
				return false // the page is being replaced: ask the new one
			}
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(loc)
			return err == nil && u.Path == path && strings.HasPrefix(u.RawQuery, query)
		})
		ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("body[data-rendered]"))); err != nil {
			t.Fatalf("the page at %s: %v", path, err)
		}
	}
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	do("open a page", chromedp.Navigate(ts.URL+"/suites/sysbench"))
	at("/login", "next=")
	do("log in", chromedp.SetValue(chromedp.CSS(`main form input[name="token"]`), reader),
		chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)))
	at("/suites/sysbench", "")
	if n := eval[int](t, bctx, `document.querySelectorAll('header form.logout button').length`); n != 1 {
		t.Fatalf("the page after login offers %d log-out buttons", n)
	}
	if c := eval[string](t, bctx, `document.cookie`); strings.Contains(c, sessionCookie) || strings.Contains(c, reader) {
		t.Errorf("the page's script reads the session or the token: %q", c)
	}
	if h1 := eval[string](t, bctx, `document.querySelector("h1") ? document.querySelector("h1").textContent : ""`); h1 == "Log in" {
		t.Error("logged in, the page is still the login form")
	}

	do("log out", chromedp.Click(chromedp.CSS(`header form.logout button`)))
	at("/login", "")
	do("open the page again", chromedp.Navigate(ts.URL+"/suites/sysbench"))
	at("/login", "next=")
	if h1 := eval[string](t, bctx, `document.querySelector("h1").textContent`); h1 != "Log in" {
		t.Errorf("after logout the page shows %q, want the login form", h1)
	}
	if log := ts.log.String(); strings.Contains(log, "csrf:") {
		t.Errorf("the browser's own forms were refused:\n%s", log)
	}
}
