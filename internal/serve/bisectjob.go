package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/store"
)

// "Bisect this": an attention entry whose builds name commits, and whose
// commits a source tree the server knows holds (--bisect-src), is
// bisected by a fleet job queued from the entry (its form, or POST
// /api/v1/attention/{key}/bisect, with the triage scope); the entry shows
// its progress and answer, /bisections its steps, and the webhook its
// answer. Here are the form's and the API's handlers, the entry's JSON and
// the webhook's post; what an entry says of bisecting it, the queueing
// and which answers there are, the application layer's internal/bisect
// decides (bisect.Dashboard), given as Options.Bisect: serve imports
// nothing above it.

// Bisector is "bisect this" as the server asks it (bisect.Dashboard):
// each is given the server, whose store, fleet, --bisect-src trees,
// generation, attention entries and log it reads (Store, Fleet,
// BisectSrc, Generation, AttentionEntries, Logf). Its errors for a
// request are BadInput (400), NotFound (404) and Conflict (409).
type Bisector interface {
	// Entries sets what each entry says of bisecting it (its Bisect).
	Entries(ctx context.Context, s *Server, es []AttentionEntry) ([]AttentionEntry, error)
	// Queue queues the bisection of the entry with key, asked by who.
	Queue(ctx context.Context, s *Server, key string, br BisectRequest, who string) (EntryBisect, error)
	// Answered are the bisections asked from entries that have ended:
	// the answers the webhook posts.
	Answered(ctx context.Context, s *Server) ([]store.Bisection, error)
}

// EntryBisect is what an attention entry says of bisecting it.
type EntryBisect struct {
	// The question: the part bisected (the largest with both commits).
	Good   string `json:"good,omitempty"` // the commit of the build before
	Bad    string `json:"bad,omitempty"`  // the commit of the build it arrived in
	Suite  string `json:"suite,omitempty"`
	Test   string `json:"test,omitempty"`
	Metric string `json:"metric,omitempty"`
	Src    string `json:"src,omitempty"` // the source tree that holds both
	// Offer says the entry can be bisected now from the page or the API
	// (a fleet, the question and its tree known, nothing bisecting it).
	Offer bool `json:"offer"`
	// Why says why it cannot be queued ("" when it can, or is).
	Why string `json:"why,omitempty"`
	// Command is the qpslab bisect command that asks the question (the
	// way to run it where there is no fleet).
	Command string `json:"command,omitempty"`
	// Job is the newest fleet job queued for it, and its River state.
	Job      int64  `json:"job,omitempty"`
	JobState string `json:"job_state,omitempty"`
	JobError string `json:"job_error,omitempty"`
	// Bisection is the stored bisection of the question (0: none yet),
	// its state, its measured steps so far, and its answer.
	Bisection int64  `json:"bisection,omitempty"`
	State     string `json:"state,omitempty"`
	Steps     int    `json:"steps,omitempty"`
	Result    string `json:"result,omitempty"`
	// Status is all of it in one line, as the entry shows it.
	Status string `json:"status,omitempty"`
	Href   string `json:"href,omitempty"` // the bisection's page
}

// withBisect adds to the entries what they say of bisecting them (none
// without a Bisector).
func (s *Server) withBisect(ctx context.Context, es []AttentionEntry) ([]AttentionEntry, error) {
	if s.o.Bisect == nil {
		return es, nil
	}
	return s.o.Bisect.Entries(ctx, s, es)
}

// queueBisect queues the bisection of the entry with key, by who.
func (s *Server) queueBisect(ctx context.Context, key string, br BisectRequest, who string) (EntryBisect, error) {
	if s.o.Bisect == nil {
		return EntryBisect{}, conflict("this server bisects nothing: it was started without a Bisector (serve.Options.Bisect)")
	}
	return s.o.Bisect.Queue(ctx, s, key, br, who)
}

// errConflict is a request the server's state refuses (409).
type errConflict struct{ msg string }

func (e *errConflict) Error() string { return e.msg }

func conflict(format string, a ...any) error { return &errConflict{fmt.Sprintf(format, a...)} }

// BadInput, NotFound and Conflict are a Bisector's errors for a request
// that cannot be answered as it is (400), that asks for what the store
// does not hold (404), or that the server's state refuses (409).
func BadInput(format string, a ...any) error { return badInput(format, a...) }

func NotFound(format string, a ...any) error { return notFound(format, a...) }

func Conflict(format string, a ...any) error { return conflict(format, a...) }

// Store, Fleet (nil: none, a SQLite store), BisectSrc (--bisect-src),
// Generation (the store's, which the cached analyses follow),
// AttentionEntries (the current generation's) and Logf (the server's log)
// are what a Bisector reads and says through the server.
func (s *Server) Store() *store.Store { return s.st }

func (s *Server) Fleet() *fleet.Fleet { return s.o.Fleet }

func (s *Server) BisectSrc() []string { return s.o.BisectSrc }

func (s *Server) Generation(ctx context.Context) (string, error) { return s.cache.generation(ctx) }

func (s *Server) AttentionEntries(ctx context.Context) ([]AttentionEntry, error) {
	return s.attentionEntries(ctx)
}

func (s *Server) Logf(format string, a ...any) { s.logf(format, a...) }

// BisectRequest is what POST /api/v1/attention/{key}/bisect may say: the
// suite's flags (as qpslab bisect's --set), the threshold, the host.
type BisectRequest struct {
	Set       map[string]string `json:"set"`
	Threshold float64           `json:"threshold"`
	Host      string            `json:"host"`
	Retries   *int              `json:"retries"`
	Rounds    int               `json:"rounds"`
}

func short(h string) string { return h[:min(len(h), 8)] }

// bisectForm is the entry's "bisect this" button: POST /attention/bisect,
// then back to the entry.
func (s *Server) bisectForm(w http.ResponseWriter, r *http.Request) {
	if !s.checkCSRF(w, r) {
		return
	}
	f := r.PostForm
	key := f.Get("key")
	if _, err := s.queueBisect(r.Context(), key, BisectRequest{}, triageWhoOf(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	back := "/"
	if fl := f.Get("attention"); fl != "" && fl != "open" {
		back = withQuery("/", url.Values{"attention": {fl}})
	}
	http.Redirect(w, r, back+"#att-"+key, http.StatusSeeOther)
}

// apiBisect queues an entry's bisection: POST
// /api/v1/attention/{key}/bisect with an optional JSON body (set,
// threshold, host, retries), a bearer token of the triage scope.
func (s *Server) apiBisect(w http.ResponseWriter, r *http.Request) {
	var br BisectRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err == nil && len(strings.TrimSpace(string(body))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		err = dec.Decode(&br)
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "the body is not a bisection request: give nothing, or "+
			`{"set": {NAME: VALUE}, "threshold": 0.05, "rounds": 10, "host": AGENT, "retries": 2}: `+
			strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	eb, err := s.queueBisect(r.Context(), r.PathValue("key"), br, triageWhoOf(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.apiJSON(w, r, http.StatusAccepted, eb)
}

// bisectAnswers posts to the webhook, once each, the answers of the
// bisections queued from attention entries that have ended (the
// Bisector's Answered; the alerts' record keeps each once, and retries a
// failed post up to maxAttempts).
func (s *Server) bisectAnswers(ctx context.Context) error {
	if s.o.Bisect == nil {
		return nil
	}
	bs, err := s.o.Bisect.Answered(ctx, s)
	if err != nil {
		return err
	}
	if len(bs) == 0 {
		return nil
	}
	as, err := s.st.Alerts(ctx)
	if err != nil {
		return err
	}
	known := map[string]store.Alert{}
	for _, a := range as {
		known[a.Key] = a
	}
	var errs []error
	for _, b := range bs {
		ak := fmt.Sprintf("bisection-%d-%s", b.ID, b.State)
		a, seen := known[ak]
		if seen && a.State != store.AlertFailed {
			continue
		}
		alert := store.Alert{
			Key:     ak,
			Series:  b.Suite + " " + b.Test + " " + b.Metric,
			Kind:    "bisection",
			Arrived: short(b.Bad),
		}
		added := false
		if !seen {
			if added, err = s.st.AddAlert(ctx, alert, s.o.Now()); err != nil {
				return err
			}
		} else if added, err = s.st.ClaimAlert(ctx, ak, maxAttempts); err != nil {
			errs = append(errs, err)
			continue
		}
		if !added {
			continue
		}
		d := bisectionDetail(b, s.link("/bisections/"+strconv.FormatInt(b.ID, 10)))
		serr := s.post(ctx, d)
		if serr != nil {
			s.logf("bisection %d: the webhook failed: %v", b.ID, serr)
			errs = append(errs, fmt.Errorf("bisection %d: %w", b.ID, serr))
		} else {
			s.logf("bisection %d: %s posted to the webhook", b.ID, b.State)
		}
		if err := s.st.AlertDone(ctx, ak, serr, s.o.Now()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// bisectionDetail is a bisection's answer as the webhook receives it.
func bisectionDetail(b store.Bisection, link string) AlertDetail {
	return AlertDetail{
		Event:        "bisection",
		SeriesChange: SeriesChange{Series: b.Suite + " " + b.Test, Suite: b.Suite, Test: b.Test, Metric: b.Metric},
		Commit:       b.Bad,
		BeforeCommit: b.Good,
		Link:         link,
		Key:          b.Params["attention"],
		State:        b.State,
		Answer:       b.Result,
		Bisection:    b.ID,
	}
}
