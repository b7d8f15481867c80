package plan

import (
	"encoding/json"
	"fmt"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
)

// Host states per label (qpslab run --boost): labels that differ in the
// state of the host, boost on or off, take turns as configs do, and the
// plan puts the host in each label's state before every part of it that
// runs: a slice or a whole run, the unmeasured batches that size a write
// test's slices, a task (the load). So a round's slices, next to each
// other in time, differ in that state and nothing else; each slice's
// switch warm-up is also the time the clock takes to settle. Each label's
// runs record the host's fingerprint in its state and the state itself
// (host.StateParam), by which a comparison of them knows the difference
// as the question rather than a confound. The plan only switches: its
// caller makes the states (host.BoostSwitch) and puts the host back after
// the plan, however it ends.

// HostState is the state of the host one label runs in.
type HostState struct {
	Name        string          // as host.StateParam records it: "boost=off"
	Set         func() error    // puts the host in it
	Fingerprint json.RawMessage // host check's JSON in it, which the label's runs record
}

// enter puts the host in label l's state, where it has one (HostStates,
// by config ID). It writes the state every time rather than trust that
// nothing else moved it.
func (p *Runner) enter(l LabelSpec) error {
	st, ok := p.HostStates[configID(l.Config)]
	if !ok {
		return nil
	}
	if err := st.Set(); err != nil {
		return fmt.Errorf("put the host in %s for %s: %w", st.Name, l.Label(), err)
	}
	return nil
}

// stampHost gives r the host of its label: the plan's fingerprint, or
// the one of its label's state, which it then names.
func (p *Runner) stampHost(it Item, r *result.Run) {
	r.Host = p.Host
	if st, ok := p.HostStates[configID(it.Config)]; ok {
		r.Host, r.Params[host.StateParam] = st.Fingerprint, st.Name
	}
}
