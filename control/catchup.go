package control

import (
	"context"
	"sync"
	"time"
)

// catchUpEvery is how often one Controller catches a Temporal run up: orch
// serve reads a run's events every 150 ms while a page or stream shows it,
// and each catch-up is a process and a call to the Temporal server.
const catchUpEvery = time.Second

// catchUpRetry is how long a run whose catch-up failed (its server cannot
// be reached) is left as it is before the next try.
const catchUpRetry = 15 * time.Second

// catchUps are when each run was last caught up by this Controller, which
// ones are being caught up now, and which failed last time.
type catchUps struct {
	mu      sync.Mutex
	last    map[string]time.Time
	running map[string]bool
	failing map[string]bool
}

// due says whether run (its database and id) may be caught up at now, and
// if so notes that it is (a concurrent reader then reads the store as it
// is rather than start a second catch-up); ended says when it is over.
func (c *catchUps) due(run string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	every := catchUpEvery
	if c.failing[run] {
		every = catchUpRetry
	}
	if t, ok := c.last[run]; ok && now.Sub(t) < every || c.running[run] {
		return false
	}
	if c.last == nil {
		c.last, c.running, c.failing = map[string]time.Time{}, map[string]bool{}, map[string]bool{}
	}
	c.last[run], c.running[run] = now, true
	return true
}

// ended notes how run's catch-up went: first is true when it failed and
// the one before had not (a failure is said once, until one succeeds).
func (c *catchUps) ended(run string, err error) (first bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, run)
	if err == nil {
		delete(c.failing, run)
		return false
	}
	first = !c.failing[run]
	c.failing[run] = true
	return first
}

// catchUpParallel is how many runs CatchUpRuns catches up at once.
const catchUpParallel = 4

// catchUpListWait bounds how long CatchUpRuns holds up a run list: the
// catch-ups still going on then finish in the background, and the list
// read after them shows them.
const catchUpListWait = 2 * time.Second

// CatchUpRuns brings the store of every Temporal run nobody follows up to
// date before a run list is read (orch serve's), as reading one run does:
// each run at most once a second whatever the number of lists read, a few
// at a time, the list held up catchUpListWait at most. A server that cannot
// be reached leaves its runs as they are (Notice is told once).
func (c *Controller) CatchUpRuns(ctx context.Context) {
	db, err := c.Reader()
	if err != nil {
		return
	}
	ids, err := db.UnfollowedTemporalRuns(ctx)
	if err != nil || len(ids) == 0 {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		slots := make(chan struct{}, catchUpParallel)
		for _, id := range ids {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				c.catchUp(context.WithoutCancel(ctx), db, id)
			})
		}
		wg.Wait()
	}()
	t := time.NewTimer(catchUpListWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}
