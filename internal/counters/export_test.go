package counters

import "time"

// SetEvery sets how often the levels are read; before Open.
func (r *Reader) SetEvery(d time.Duration) { r.every = d }

// LevelReads is how many level readings the window has had so far (the
// one at Open, one a tick).
func (r *Reader) LevelReads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.levelReads
}
