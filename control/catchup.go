package control

import (
	"sync"
	"time"
)

// catchUpEvery is how often one Controller catches a Temporal run up: orch
// serve reads a run's events every 150 ms while a page or stream shows it,
// and each catch-up is a process and a call to the Temporal server.
const catchUpEvery = time.Second

// catchUps are when each run was last caught up by this Controller.
type catchUps struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due says whether run (its database and id) may be caught up at now, and
// if so notes that it is (a concurrent reader then reads the store as it
// is rather than start a second catch-up).
func (c *catchUps) due(run string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.last[run]; ok && now.Sub(t) < catchUpEvery {
		return false
	}
	if c.last == nil {
		c.last = map[string]time.Time{}
	}
	c.last[run] = now
	return true
}
