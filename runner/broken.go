package runner

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// RecordError ends a run that could not be recorded: a write to the store
// failed (a full disk, a read-only or damaged database, the lease taken by
// another process). Every agent was stopped; what was recorded before
// stays, and orch resume continues the run once the store can be written.
type RecordError struct {
	RunID string
	Err   error // the store's error, as it said it
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("run %s could not be recorded: %v", e.RunID, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// brokenRecord holds the first recorder failure of a run. Any goroutine
// may set it (the loop, an attempt, the output log's watcher); done wakes
// the loop, which then stops everything.
type brokenRecord struct {
	err  atomic.Pointer[RecordError]
	done chan struct{}
}

func (b *brokenRecord) get() error {
	if e := b.err.Load(); e != nil {
		return e
	}
	return nil // not a typed nil
}

// recordFailed notes that the recorder failed with err and returns the
// run's error: the first failure, which says what went wrong.
func (r *recording) recordFailed(err error) error {
	if r.broken.err.CompareAndSwap(nil, &RecordError{RunID: r.runID, Err: err}) {
		close(r.broken.done)
		r.storeWaits.cancel(err) // nothing more waits for the store
	}
	return r.broken.err.Load()
}

// abandon ends a run that cannot be recorded: every attempt is stopped and
// every agent with it, at once (as a cascade stop: coord.stop, then
// SIGTERM, SIGKILL after the kill grace). Nothing is waited for that
// depends on the store.
func (r *run) abandon(ctx context.Context, err error) error {
	r.haltAttempts("the run could not be recorded") // before the agents are closed (see halt)
	agentsGone := make(chan struct{})
	go func() { r.host.agents.Halt(); close(agentsGone) }()
	r.stopAll(ctx, "the run could not be recorded")
	<-agentsGone
	return err
}

// renewLease renews the run's lease when it is due. It returns the run's
// error when another process has taken the run over, or when the lease
// could not be renewed for longer than it lasts (another process may take
// the run over by now: this one must stop).
func (r *run) renewLease(ctx context.Context) error {
	if time.Since(r.beatAt) < record.HeartbeatEvery {
		return nil
	}
	r.beatAt = time.Now()
	err := r.rec.Heartbeat(context.WithoutCancel(ctx), r.id, r.opts.Owner.Token)
	switch {
	case err == nil:
		r.beatOK = r.beatAt
		return nil
	case errors.Is(err, record.ErrLeaseLost):
		return r.recordFailed(err)
	case r.beatOK.IsZero():
		r.beatOK = r.beatAt // the first try: the lease was taken at the start
	case time.Since(r.beatOK) >= record.LeaseTTL-record.HeartbeatEvery:
		return r.recordFailed(fmt.Errorf("renewing the run's lease: %w", err))
	}
	return nil // tried again at the next beat; the lease outlives a few
}

// watchOutputLog checks every HeartbeatEvery that the agents' output is
// being stored (Recorder.Log does not wait, so a failure shows at the next
// Flush). It runs beside the loop so the loop never waits for the log;
// the returned func stops it (without waiting for a Flush under way).
func (r *run) watchOutputLog() (stop func()) {
	quit := make(chan struct{})
	go func() {
		tick := time.NewTicker(record.HeartbeatEvery)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-r.broken.done:
				return
			case <-tick.C:
			}
			if err := r.rec.Flush(context.Background()); err != nil {
				r.recordFailed(fmt.Errorf("storing the agents' output: %w", err))
				return
			}
		}
	}()
	return func() { close(quit) }
}

// flushLog waits until the agents' output logged so far is stored.
func (r *run) flushLog(ctx context.Context) error {
	if err := r.rec.Flush(context.WithoutCancel(ctx)); err != nil {
		return r.recordFailed(fmt.Errorf("storing the agents' output: %w", err))
	}
	return nil
}
