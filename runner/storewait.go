package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// How long the run waits for its store. A write waits for as long as the
// store lets it (another process's write lock: the store's lock timeout),
// and meanwhile nothing it carries is acted on: GOs pause, agents go on.
// But once the run is told to stop (a signal, Ctrl-C), SIGTERM must end
// orch within kill_grace + 2s whatever the store does: a write still in
// flight stuckAfterStop after the stop, or the run's record not finished
// kill_grace + stopSlack after it, ends the run's waiting for good (the
// run ends with a RecordError, its agents stopped as by abandon). So does
// the first write that failed: once the run cannot be recorded, nothing
// more waits for the store.
const (
	stuckAfterStop = 500 * time.Millisecond
	stopSlack      = 1500 * time.Millisecond
)

// storeWaits is what the run knows of its writes in flight; any goroutine
// writes.
type storeWaits struct {
	ctx      context.Context // every write of the run is given this context
	cancel   context.CancelCauseFunc
	inflight atomic.Int32
	progress atomic.Int64 // when a write last began with none in flight, or ended (unix ns)
}

func (w *storeWaits) init() { w.ctx, w.cancel = context.WithCancelCause(context.Background()) }

// begin marks a write in flight; the func it returns marks its end.
func (w *storeWaits) begin() func() {
	if w.inflight.Add(1) == 1 {
		w.progress.Store(time.Now().UnixNano())
	}
	return w.end
}

func (w *storeWaits) end() {
	w.progress.Store(time.Now().UnixNano())
	w.inflight.Add(-1)
}

// stuck says since when the store has not finished a write while one is in
// flight.
func (w *storeWaits) stuck() (since time.Time, ok bool) {
	if w.inflight.Load() == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, w.progress.Load()), true
}

// boundAfterStop is called when the run is told to stop: from then on the
// run waits for its store only so long (see above).
func (r *run) boundAfterStop() {
	stopAt := time.Now()
	deadline := stopAt.Add(r.grace + stopSlack)
	go func() {
		tick := time.NewTicker(stuckAfterStop / 5)
		defer tick.Stop()
		for {
			select {
			case <-r.storeWaits.ctx.Done():
				return
			case now := <-tick.C:
				if now.After(deadline) {
					r.storeWaits.cancel(fmt.Errorf("the run was stopped and its record was not finished within kill_grace + %s", stopSlack))
					return
				}
				if since, ok := r.storeWaits.stuck(); ok && now.Sub(later(since, stopAt)) >= stuckAfterStop {
					r.storeWaits.cancel(fmt.Errorf("the run was stopped and the database did not answer within %s", stuckAfterStop))
					return
				}
			}
		}
	}()
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// boundRecorder gives every write of the run the run's own context (see
// storeWaits), whatever context its caller had: a decision is committed
// even while the run is being stopped, for as long as the store may take.
type boundRecorder struct {
	record.Recorder

	w *storeWaits
}

func (b boundRecorder) Append(_ context.Context, events ...record.Event) error {
	defer b.w.begin()()
	return b.Recorder.Append(b.w.ctx, events...)
}

func (b boundRecorder) Flush(context.Context) error {
	defer b.w.begin()()
	return b.Recorder.Flush(b.w.ctx)
}

func (b boundRecorder) BlackboardWrite(_ context.Context, runID, key string, value json.RawMessage, author string) (int64, error) {
	defer b.w.begin()()
	return b.Recorder.BlackboardWrite(b.w.ctx, runID, key, value, author)
}

func (b boundRecorder) BlackboardWriteMany(_ context.Context, runID string, puts []record.BlackboardPut) ([]record.BlackboardWritten, error) {
	defer b.w.begin()()
	return b.Recorder.BlackboardWriteMany(b.w.ctx, runID, puts)
}

func (b boundRecorder) MemoryWrite(_ context.Context, item record.MemoryItem) error {
	defer b.w.begin()()
	return b.Recorder.MemoryWrite(b.w.ctx, item)
}

func (b boundRecorder) MemoryDelete(_ context.Context, runID, key string) (bool, error) {
	defer b.w.begin()()
	return b.Recorder.MemoryDelete(b.w.ctx, runID, key)
}

func (b boundRecorder) CommandDone(_ context.Context, id int64) error {
	defer b.w.begin()()
	return b.Recorder.CommandDone(b.w.ctx, id)
}

func (b boundRecorder) Heartbeat(_ context.Context, runID, token string) error {
	defer b.w.begin()()
	return b.Recorder.Heartbeat(b.w.ctx, runID, token)
}
