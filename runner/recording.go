package runner

import (
	"context"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
)

// recording is how the run records: decisions pending their commit, the
// observer's order, the lease, a recorder failure. pending, actions, goes
// and the lease times are the loop's; observeMu orders the commits of all
// goroutines; broken may be set by any.
type recording struct {
	runID     string
	observer  *observer // shows Options.Observe the events committed; nil: none
	rec       record.Recorder
	redact    *redact.Redactor
	observeMu sync.Mutex
	pending   []record.Event // decided, not yet committed
	lastBatch int            // how many events the last flush committed (see flush)
	actions   []func()       // to do once pending is committed
	goes      []func()       // GO orders, carried out after the actions (see flush)
	broken    brokenRecord   // a recorder failure: the run cannot go on
	beatAt    time.Time      // when the lease was last tried
	beatOK    time.Time      // when it was last renewed

	storeWaits // how long the run's writes may wait (storewait.go)
}

// emit queues events to commit with the next flush. The loop batches what
// one iteration decides into one transaction.
func (r *recording) emit(events ...record.Event) {
	now := time.Now().UTC()
	for i := range events {
		events[i].RunID = r.runID
		if events[i].At.IsZero() {
			events[i].At = now
		}
	}
	if r.pending == nil {
		r.pending = make([]record.Event, 0, max(r.lastBatch, len(events)))
	}
	r.pending = append(r.pending, events...)
}

// then queues an action (starting an attempt, an order to an agent) to run
// once the events queued before it are committed: a decision is recorded
// before it is acted on.
func (r *recording) then(action func()) { r.actions = append(r.actions, action) }

// thenGo queues a GO order to an attempt, carried out after the other
// actions (see flush).
func (r *recording) thenGo(order func()) { r.goes = append(r.goes, order) }

// flush commits the queued events in one transaction, hands them to the
// observer, then carries out the queued actions. If the commit fails,
// nothing is acted on and the run ends with the error. The observer shows
// them on its own goroutine: a GO reaches its agent without waiting for
// lines written to a terminal or a CI log.
func (r *recording) flush(ctx context.Context) error {
	events, actions, goes := r.pending, r.actions, r.goes
	// The next decision is likely the size of this one (a chained cue's is
	// six events, emitted one or two at a time): room for it at once is one
	// allocation, not four as append grows the slice. The slice itself is
	// not reused: the recorder and the observer are handed these events.
	if len(events) > 0 {
		r.lastBatch = len(events)
	}
	r.pending, r.actions, r.goes = nil, nil, nil
	if r.broken.get() != nil {
		// The run is ending: what is still decided is recorded if it can
		// be, and nothing new is started (stopAll stops what runs).
		actions, goes = nil, nil
	}
	err := r.commit(ctx, events, func() {
		for _, act := range actions {
			act()
		}
		for _, order := range goes {
			order()
		}
	})
	// Done with, and nobody else holds them: the next decision's actions
	// go in the same room, unless an action queued more meanwhile.
	if r.actions == nil {
		clear(actions)
		r.actions = actions[:0]
	}
	if r.goes == nil {
		clear(goes)
		r.goes = goes[:0]
	}
	return err
}

// record emits events and commits them at once.
func (r *recording) record(ctx context.Context, events ...record.Event) error {
	r.emit(events...)
	return r.flush(ctx)
}

// publish commits events and shows them to the observer; attempts call it
// from their own goroutines for notes.
func (r *recording) publish(ctx context.Context, events ...record.Event) error {
	return r.commit(ctx, events, nil)
}

// commit records events, hands them to the observer, then runs act. The
// observer's lock is held from the commit to the hand-over, so the observer
// sees events in the order they were recorded (their seq order). They are
// handed over before act because that costs act nothing (the display is
// the observer's goroutine's), and so that goroutine is not what a GO'd
// attempt waits behind.
func (r *recording) commit(ctx context.Context, events []record.Event, act func()) error {
	if len(events) > 0 {
		if err := r.appendHandingOver(ctx, events); err != nil {
			return err
		}
	}
	if act != nil {
		act()
	}
	return nil
}

// appendHandingOver records events and hands them to the observer, under
// the observer's lock.
func (r *recording) appendHandingOver(ctx context.Context, events []record.Event) error {
	if r.observer != nil {
		r.observeMu.Lock()
		defer r.observeMu.Unlock()
	}
	// A decision is committed even while the run is being stopped.
	// One that is not recorded is not acted on, and the run ends.
	if err := r.rec.Append(context.WithoutCancel(ctx), events...); err != nil {
		return r.recordFailed(err)
	}
	if r.observer != nil {
		r.observer.add(events...)
	}
	return nil
}

// shown returns once the observer has shown every event committed so far:
// a prompt to a person comes after the lines of what led to it. Never on
// the loop, which does not wait for the display.
func (r *recording) shown() {
	if r.observer != nil {
		r.observer.sync()
	}
}

// writeBoard stores blackboard writes and shows their events, in order with
// the run's other events (see commit).
func (r *recording) writeBoard(ctx context.Context, puts []record.BlackboardPut) ([]record.BlackboardWritten, error) {
	if r.observer != nil {
		r.observeMu.Lock()
		defer r.observeMu.Unlock()
	}
	written, err := r.rec.BlackboardWriteMany(context.WithoutCancel(ctx), r.runID, puts)
	if r.observer != nil {
		for _, w := range written {
			r.observer.add(w.Event)
		}
	}
	if err != nil { // the runner sends only valid writes: the store failed
		return written, r.recordFailed(err)
	}
	return written, nil
}
