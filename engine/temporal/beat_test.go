package temporal

import (
	"context"
	"testing"

	"go.temporal.io/sdk/temporal"
)

// The SDK cancels an activity's context once the activity returned. A
// phase's beat that sees that cancellation only after its phase ended (a
// busy machine: it had not run since) must not take it for a stop: a pooled
// agent's attempt keeps its halt for its next phases, which a closed halt
// would stop at once ("stopped"), and whose own beat would close it again
// (panic: close of closed channel). Both ends are ready when beat looks:
// before the fix, it picked either at random.
func TestBeatAfterItsPhaseEndedDoesNotHalt(t *testing.T) {
	h := newStepHost(nil)
	for range 64 { // the phases of one attempt
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		close(done) // the phase ended,
		cancel()    // then the SDK cancelled its activity's context
		beat(ctx, h, done)
		select {
		case <-h.halts.ch:
			t.Fatal("the attempt was halted by the end of its phase's activity")
		default:
		}
	}
}

// A stop halts an attempt once: a pooled attempt's next phase stopped too
// (its first phase ended as the stop came) does not close the halt again.
func TestBeatHaltsAnAttemptOnce(t *testing.T) {
	h := newStepHost(nil)
	for range 2 {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(temporal.NewCanceledError()) // orch stop
		done := make(chan struct{})
		beat(ctx, h, done)
		halted(t, h.halts.ch)
		close(done)
	}
}
