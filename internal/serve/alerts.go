package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/store"
)

// Alerts: when new results bring a regression change point of one of the
// alert metrics whose magnitude is at least the threshold, one webhook
// POST says so. A change point is one series' change arriving in one build
// (or, for one build's runs in time order, at one time): it keeps its
// identity (alertKey) as the history grows, and the store records each
// one, so that it is posted at most once, by one of the servers sharing a
// store. The change points stored before alerts began are recorded as
// known and never posted: only new results alert (unless AlertExisting).

// maxAttempts is how many times an alert the webhook refused is tried.
const maxAttempts = 5

// Payload is what the webhook receives: Slack's and Mattermost's incoming
// webhooks read text (and ignore the rest); qpslab holds the change point
// for any other receiver.
type Payload struct {
	Text   string      `json:"text"`
	Qpslab AlertDetail `json:"qpslab"`
}

// SeriesChange is a change point's series and figures, as alerts and the
// attention view give them.
type SeriesChange struct {
	Series     string  `json:"series"`
	Suite      string  `json:"suite"`
	Test       string  `json:"test"`
	Metric     string  `json:"metric"`
	Threads    int     `json:"threads,omitempty"`
	Config     string  `json:"config,omitempty"`
	Host       string  `json:"host,omitempty"`
	Magnitude  float64 `json:"magnitude"` // relative change of the means: -0.2 is 20 % lower
	MeanBefore float64 `json:"mean_before"`
	MeanAfter  float64 `json:"mean_after"`
	PValue     float64 `json:"pvalue"`
}

func seriesChange(sr Series, c analysis.Change) SeriesChange {
	return SeriesChange{Series: c.Series, Suite: sr.Suite, Test: sr.Test, Metric: sr.Metric, Threads: sr.Threads, Config: sr.Config, Host: sr.Host,
		Magnitude: c.Magnitude, MeanBefore: c.MeanBefore, MeanAfter: c.MeanAfter, PValue: c.PValue}
}

// AlertDetail is one change point, as the webhook receives it.
type AlertDetail struct {
	// Event is "regression", "triage" (a change of an attention entry's
	// state), or "bisection" (a bisection's answer).
	Event string `json:"event"`
	SeriesChange
	Build         string `json:"build"` // where it arrived
	Version       string `json:"version,omitempty"`
	Commit        string `json:"commit,omitempty"`
	Time          string `json:"time,omitempty"`
	BeforeBuild   string `json:"before_build,omitempty"`
	BeforeVersion string `json:"before_version,omitempty"`
	Link          string `json:"link"`
	// A triage event's: the key of the entry or change point, its new
	// state, note, fixed-in build, and who set it.
	Key     string `json:"key,omitempty"`
	State   string `json:"state,omitempty"`
	Note    string `json:"note,omitempty"`
	FixedIn string `json:"fixed_in,omitempty"`
	Who     string `json:"who,omitempty"`
	// A bisection event's: the commits bisected (BeforeCommit GOOD,
	// Commit BAD), the bisection, and its answer (State its state).
	BeforeCommit string `json:"before_commit,omitempty"`
	Bisection    int64  `json:"bisection,omitempty"`
	Answer       string `json:"answer,omitempty"`
}

// alertKey names a change point for good: its series and where it arrived.
func alertKey(s history.Series, c analysis.Change) string {
	h := sha256.Sum256([]byte(strings.Join([]string{s.Suite, s.Test, s.Metric, strconv.Itoa(s.Threads), s.Config, s.Host, s.Conditions, c.Kind, changeWhere(c)}, "\x00")))
	return hex.EncodeToString(h[:16])
}

type candidate struct {
	alert  store.Alert
	detail AlertDetail
}

// regressions are the change points that would alert: regressions of the
// alert metrics at or above the threshold, over every test.
func (s *Server) regressions(ctx context.Context) ([]candidate, error) {
	var out []candidate
	for _, m := range s.o.AlertMetrics {
		series, err := s.cache.allChanges(ctx, "", m)
		if err != nil {
			return nil, err
		}
		for _, sr := range series {
			for _, c := range sr.Changes {
				if c.Kind != "regression" || math.Abs(c.Magnitude) < s.o.AlertThreshold {
					continue
				}
				d := AlertDetail{Event: c.Kind, SeriesChange: seriesChange(sr, c),
					Build: c.Arrived.Build, Version: c.Arrived.Version, Commit: c.Arrived.Commit, Time: pointTime(c.Arrived.Time),
					BeforeBuild: c.Before.Build, BeforeVersion: c.Before.Version, Link: s.link(changeHref(sr.Suite, sr.Test, sr.Series, c))}
				out = append(out, candidate{
					alert:  store.Alert{Key: alertKey(sr.Series, c), Series: c.Series, Kind: c.Kind, Magnitude: c.Magnitude, Arrived: pointName(c.Arrived, c.Order)},
					detail: d,
				})
			}
		}
	}
	return out, nil
}

// alert posts the regressions no alert was recorded for; the first time,
// it records those there are as known instead.
func (s *Server) alert(ctx context.Context) error {
	cands, err := s.regressions(ctx)
	if err != nil {
		return err
	}
	done, err := s.st.HasAlertsBaseline(ctx)
	if err != nil {
		return err
	}
	if !done {
		var known []store.Alert
		if !s.o.AlertExisting {
			for _, c := range cands {
				known = append(known, c.alert)
			}
		}
		taken, err := s.st.AlertsBaseline(ctx, known, s.o.Now())
		if err != nil {
			return err
		}
		if taken && !s.o.AlertExisting {
			s.logf("alerts: %d regression change point(s) already stored are known: only new results alert", len(known))
			return nil
		}
	}
	failed := map[string]store.Alert{}
	as, err := s.st.Alerts(ctx)
	if err != nil {
		return err
	}
	for _, a := range as {
		if a.State == store.AlertFailed {
			failed[a.Key] = a
		}
	}
	var errs []error
	for _, c := range cands {
		added, err := s.st.AddAlert(ctx, c.alert, s.o.Now())
		if err != nil {
			return err
		}
		if !added {
			if _, ok := failed[c.alert.Key]; !ok {
				continue
			}
			if added, err = s.st.ClaimAlert(ctx, c.alert.Key, maxAttempts); err != nil || !added {
				if err != nil {
					errs = append(errs, err)
				}
				continue
			}
		}
		serr := s.post(ctx, c.detail)
		if serr != nil {
			s.logf("alert %s: the webhook failed: %v", c.detail.Series, serr)
			errs = append(errs, fmt.Errorf("alert %s: %w", c.detail.Series, serr))
		} else {
			s.logf("alert %s: %s %+.1f%% in %s posted to the webhook", c.detail.Series, c.detail.Event, 100*c.detail.Magnitude, c.alert.Arrived)
		}
		if err := s.st.AlertDone(ctx, c.alert.Key, serr, s.o.Now()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// alertText is the one line Slack or Mattermost shows.
func alertText(d AlertDetail) string {
	if d.Event == "triage" {
		what := d.State
		if d.FixedIn != "" {
			what += " in " + d.FixedIn
		}
		note := ""
		if d.Note != "" {
			note = ": " + d.Note
		}
		return fmt.Sprintf("qpslab: %s %s by %s%s: %s", d.Series, what, d.Who, note, d.Link)
	}
	if d.Event == "bisection" {
		return fmt.Sprintf("qpslab: bisection %d of %s %s between %s and %s: %s: %s: %s", d.Bisection, d.Series,
			d.Metric,
			short(d.BeforeCommit), short(d.Commit), d.State, d.Answer, d.Link)
	}
	arrived := d.Build
	if d.Version != "" && d.Version != d.Build {
		arrived += " " + d.Version
	}
	if d.Time != "" && d.Build == "" {
		arrived = d.Time
	}
	after := ""
	if d.BeforeBuild != "" && d.BeforeBuild != d.Build {
		after = " after " + strings.TrimSpace(d.BeforeBuild+" "+d.BeforeVersion)
	}
	return fmt.Sprintf("qpslab: %s %+.1f%% in %s (%s → %s), arrived in %s%s: %s",
		d.Event, 100*d.Magnitude, d.Series, report.Num(d.MeanBefore), report.Num(d.MeanAfter), arrived, after, d.Link)
}

// post sends one alert to the webhook: a 2xx answer is sent. Its errors
// never name the webhook's address (a Slack address is its secret).
func (s *Server) post(ctx context.Context, d AlertDetail) error {
	var j, b bytes.Buffer // report.JSON: a non-finite figure is null, not an error
	if err := report.JSON(&j, Payload{Text: alertText(d), Qpslab: d}); err != nil || json.Compact(&b, j.Bytes()) != nil {
		return fmt.Errorf("encode the alert: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.o.Webhook, &b)
	if err != nil {
		return errors.New("the webhook address is not a URL")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.o.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("post: %v", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
