package main

import (
	"context"
	"sync"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// seqProgress shows a run's event log to a progress display: every event of
// the run, whichever process committed it, once, in seq order.
//
// The runner shows the events it commits, in their seq order, right after
// acting on them. Other processes commit events of the run too (an agent's
// orch bb set): each leaves a gap in the seq the runner shows, and the gap
// is read from the store before the event after it is shown. Its events are
// committed by then, since a run's seq is given out under the write lock.
// While nobody else writes there is no gap, and nothing is read.
type seqProgress struct {
	db   *store.DB
	show func(record.Event)

	mu    sync.Mutex
	runID string
	last  int64 // the seq shown last; 0 before the first event
}

func (p *seqProgress) event(e record.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runID == "" {
		// A continued run shows what happens from now on: its log so far
		// was shown by the command that ran it then (and orch events has it).
		p.runID, p.last = e.RunID, e.Seq-1
	}
	if e.Seq <= p.last {
		return // shown already, read with a gap
	}
	if e.Seq > p.last+1 {
		p.showAfter(e.Seq)
	}
	p.show(e)
	p.last = e.Seq
}

// finish shows what other processes committed after the runner's last
// event (nothing, usually: the run's final state is the runner's).
func (p *seqProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runID != "" {
		p.showAfter(0)
	}
}

// showAfter shows the stored events after the last one shown and before
// seq (0: all of them). When they cannot be read, the display goes on
// without them: orch events still has them.
func (p *seqProgress) showAfter(before int64) {
	limit := 0
	if before > 0 {
		limit = int(before - p.last - 1)
	}
	events, _ := p.db.Events(context.Background(), p.runID, p.last, limit)
	for _, e := range events {
		p.show(e)
		p.last = e.Seq
	}
}
