package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Host is an agent as the fleet knows it: what it registered and its
// heartbeat.
type Host struct {
	Name        string          `json:"name"`
	Labels      []string        `json:"labels"`
	HostID      string          `json:"host_id"`     // host.ID of its fingerprint
	Fingerprint json.RawMessage `json:"fingerprint"` // host check's JSON
	Hostname    string          `json:"hostname"`    // the machine's
	Builds      []Build         `json:"builds"`
	Configs     []Config        `json:"configs"`
	// State is Idle, Working, Stopping (finishing its job after SIGTERM),
	// Stopped (it ended cleanly), or Lost: no heartbeat for LostAfter.
	State     string        `json:"state"`
	Job       int64         `json:"job,omitempty"` // the job it works on
	Interval  time.Duration `json:"interval_ns"`   // its heartbeat interval
	Started   time.Time     `json:"started"`
	Heartbeat time.Time     `json:"heartbeat"`
	// Since is the time since its last heartbeat, by the database's clock.
	Since time.Duration `json:"since_ns"`
}

// Build is a build an agent has.
type Build struct {
	Name    string `json:"name"`
	Flavor  string `json:"flavor"`
	Version string `json:"version"`
}

// Config is a config an agent has: its name, family and name@hash.
type Config struct {
	Name   string `json:"name"`
	Family string `json:"family"`
	ID     string `json:"id"`
}

// The states of a host. Its agent records Idle, Working, Stopping and
// Stopped; Lost is never recorded: Hosts shows it for a host, not
// stopped, whose last heartbeat is older than LostAfter.
const (
	Idle     = "idle"     // registered, waiting for a job
	Working  = "working"  // working on a job
	Stopping = "stopping" // stopped by SIGTERM: its job in progress ends (or is aborted), then the agent
	Stopped  = "stopped"  // it ended cleanly
	Lost     = "lost"     // its heartbeats stopped: killed, or its machine or network is gone
)

// moves are the moves between the recorded states that an agent may make,
// from each state to the states listed. A heartbeat repeats the state it
// is in (x → x); registration is not a move: it records idle under a new
// agent process (runner), and it alone leaves stopped (or lost).
//
//	from \ to    idle  working  stopping  stopped
//	idle         yes   yes      yes       yes
//	working      yes   yes      yes       yes
//	stopping     -     -        yes       yes
//	stopped      -     -        -         -
//
// Stopping leads only to stopped: a job that starts while its agent stops
// (River fetched it just before) is shown stopping, with its job, not
// working. The writes of an agent's state (beat) are guarded by this
// table in the UPDATE itself, so that no write that was overtaken by a
// later one (a heartbeat in flight as the agent stops) can undo it.
var moves = map[string][]string{
	Idle:     {Idle, Working, Stopping, Stopped},
	Working:  {Idle, Working, Stopping, Stopped},
	Stopping: {Stopping, Stopped},
	Stopped:  {},
}

// movesInto returns the states from which an agent may move to state.
func movesInto(state string) []string {
	var from []string
	for _, s := range []string{Idle, Working, Stopping, Stopped} {
		if slices.Contains(moves[s], state) {
			from = append(from, s)
		}
	}
	return from
}

// move returns the state an agent in state from enters when it is told to
// enter state to: to if the table allows it; stopping if it is stopping
// and told idle or working (it finishes its job, then stops); else from.
func move(from, to string) string {
	switch {
	case slices.Contains(moves[from], to):
		return to
	case from == Stopping && (to == Idle || to == Working):
		return Stopping
	}
	return from
}

// LostAfter is how long a host may go without a heartbeat before it is
// lost: three missed heartbeats.
func LostAfter(interval time.Duration) time.Duration { return 3 * interval }

// Has reports whether the host has the named build.
func (h Host) Has(build string) (Build, bool) {
	for _, b := range h.Builds {
		if b.Name == build {
			return b, true
		}
	}
	return Build{}, false
}

// HasConfig reports whether the host has the named config of family fam.
func (h Host) HasConfig(name, fam string) (Config, bool) {
	for _, c := range h.Configs {
		if c.Name == name && c.Family == fam {
			return c, true
		}
	}
	return Config{}, false
}

// Hosts lists every agent that ever registered, by name.
func (f *Fleet) Hosts(ctx context.Context) ([]Host, error) {
	rows, err := f.pool.Query(ctx, `SELECT name, labels, host_id, fingerprint, hostname, builds, configs, state, COALESCE(job, 0), interval_ms,
		started, heartbeat, EXTRACT(EPOCH FROM now() - heartbeat)::float8 FROM fleet_hosts ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list the hosts in %s: %w", f.where, err)
	}
	defer rows.Close()
	var out []Host
	for rows.Next() {
		var h Host
		var fp string
		var builds, configs []byte
		var ms int64
		var since float64
		if err := rows.Scan(&h.Name, &h.Labels, &h.HostID, &fp, &h.Hostname, &builds, &configs, &h.State, &h.Job, &ms, &h.Started, &h.Heartbeat, &since); err != nil {
			return nil, fmt.Errorf("list the hosts in %s: %w", f.where, err)
		}
		h.Fingerprint = json.RawMessage(fp)
		h.Interval = time.Duration(ms) * time.Millisecond
		h.Since = time.Duration(since * float64(time.Second))
		if err := errors.Join(json.Unmarshal(builds, &h.Builds), json.Unmarshal(configs, &h.Configs)); err != nil {
			return nil, fmt.Errorf("host %s in %s: %w", h.Name, f.where, err)
		}
		if h.State != Stopped && h.Since > LostAfter(h.Interval) {
			h.State = Lost
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// Resolve turns --hosts (agent names and labels) into the hosts they name,
// in name order, each once. A word that is neither a name nor a label is
// an error listing what there is.
func (f *Fleet) Resolve(ctx context.Context, words []string) ([]Host, error) {
	all, err := f.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w in %s: start one on each benchmark host with qpslab agent --store … --labels …", ErrNoHosts, f.where)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("name the hosts to run on with --hosts NAME|LABEL,… (qpslab fleet hosts lists them)")
	}
	picked := map[string]bool{}
	for _, w := range words {
		found := false
		for _, h := range all {
			if h.Name == w || slices.Contains(h.Labels, w) {
				picked[h.Name], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("--hosts %s: no agent has that name or label (names: %s; labels: %s): see qpslab fleet hosts", w, strings.Join(Names(all), ", "), strings.Join(labels(all), ", "))
		}
	}
	var out []Host
	for _, h := range all {
		if picked[h.Name] {
			out = append(out, h)
		}
	}
	return out, nil
}

// Names are the hosts' names, in order.
func Names(hs []Host) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Name)
	}
	return out
}

func labels(hs []Host) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range hs {
		for _, l := range h.Labels {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// registerChecked, when set (tests only), runs inside a registration's
// transaction once its check has passed, before its write.
var registerChecked func(name, runner string)

// register records the agent (a new row, or the row of its name when the
// agent that had it stopped or is lost), refusing a name whose agent is
// alive. Registrations of one name take turns on a transaction-scoped
// advisory lock: SELECT … FOR UPDATE locks no row while the name is new, so
// without it two agents registering a new name at once would both pass the
// check and the second's upsert would take the first's row.
func (f *Fleet) register(ctx context.Context, h Host, runner string) error {
	builds, err1 := json.Marshal(h.Builds)
	configs, err2 := json.Marshal(h.Configs)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("register host %s: %w", h.Name, err)
	}
	if h.Labels == nil {
		h.Labels = []string{}
	}
	return pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('qpslab fleet host'), hashtext($1))`, h.Name); err != nil {
			return fmt.Errorf("register host %s in %s: %w", h.Name, f.where, err)
		}
		var state, hostname string
		var since float64
		var ms int64
		err := tx.QueryRow(ctx, `SELECT state, hostname, interval_ms, EXTRACT(EPOCH FROM now() - heartbeat)::float8 FROM fleet_hosts WHERE name = $1 FOR UPDATE`, h.Name).
			Scan(&state, &hostname, &ms, &since)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("register host %s in %s: %w", h.Name, f.where, err)
		case state != Stopped && time.Duration(since*float64(time.Second)) <= LostAfter(time.Duration(ms)*time.Millisecond):
			return fmt.Errorf("an agent named %s is running on %s (its last heartbeat %.0f s ago): stop it, or give this one another --name", h.Name, hostname, since)
		}
		if registerChecked != nil {
			registerChecked(h.Name, runner)
		}
		_, err = tx.Exec(ctx, `INSERT INTO fleet_hosts (name, labels, host_id, fingerprint, hostname, builds, configs, runner, state, job, interval_ms, started, heartbeat)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'idle', NULL, $9, now(), now())
			ON CONFLICT (name) DO UPDATE SET labels = excluded.labels, host_id = excluded.host_id, fingerprint = excluded.fingerprint, hostname = excluded.hostname,
			builds = excluded.builds, configs = excluded.configs, runner = excluded.runner, state = 'idle', job = NULL, interval_ms = excluded.interval_ms,
			started = now(), heartbeat = now()`,
			h.Name, h.Labels, h.HostID, string(h.Fingerprint), h.Hostname, builds, configs, runner, h.Interval.Milliseconds())
		if err != nil {
			return fmt.Errorf("register host %s in %s: %w", h.Name, f.where, err)
		}
		return nil
	})
}

// errTaken is a heartbeat's error when the agent's row belongs to another
// agent now (this one was lost, and another took its name).
var errTaken = errors.New("another agent took this agent's name")

// errMove is a heartbeat's error when the move from the state recorded to
// the one it writes is not one of moves (the host is recorded stopped).
var errMove = errors.New("a move the agent's states do not allow")

// beat records a heartbeat with the agent's state and job, if the agent
// (runner) still holds the name and the state recorded may move to state
// (moves): the UPDATE's own condition, so that no concurrent write comes
// between the check and the write. A heartbeat that writes nothing is
// errTaken if the row is another agent's, else errMove; the row is read
// again only to say which, not to decide the write: neither answer can
// change back (a runner is never reused, and a row it recorded stopped
// changes only by another runner's registration).
func (f *Fleet) beat(ctx context.Context, name, runner, state string, job int64) error {
	var j any
	if job != 0 {
		j = job
	}
	tag, err := f.pool.Exec(ctx, `UPDATE fleet_hosts SET heartbeat = now(), state = $1, job = $2 WHERE name = $3 AND runner = $4 AND state = ANY($5)`,
		state, j, name, runner, movesInto(state))
	if err != nil {
		return fmt.Errorf("heartbeat of %s in %s: %w", name, f.where, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var holder, was string
	switch err := f.pool.QueryRow(ctx, `SELECT runner, state FROM fleet_hosts WHERE name = $1`, name).Scan(&holder, &was); {
	case errors.Is(err, pgx.ErrNoRows) || err == nil && holder != runner:
		return fmt.Errorf("%s: %w (it found this one lost)", name, errTaken)
	case err != nil:
		return fmt.Errorf("heartbeat of %s in %s: %w", name, f.where, err)
	}
	return fmt.Errorf("heartbeat of %s in %s: %s to %s: %w", name, f.where, was, state, errMove)
}

// publish records what the agent has now (after a job fetched a build).
func (f *Fleet) publish(ctx context.Context, name, runner string, builds []Build, configs []Config) error {
	b, err1 := json.Marshal(builds)
	c, err2 := json.Marshal(configs)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	_, err := f.pool.Exec(ctx, `UPDATE fleet_hosts SET builds = $1, configs = $2 WHERE name = $3 AND runner = $4`, b, c, name, runner)
	if err != nil {
		return fmt.Errorf("update host %s in %s: %w", name, f.where, err)
	}
	return nil
}
