package temporal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

// stubBeats makes the heartbeats after a server loss call beat, quickly.
func stubBeats(t *testing.T, beat func() error) {
	t.Helper()
	oldEvery, oldRecord, oldLimit := heartbeatEvery, recordHeartbeat, serverLostLimit
	heartbeatEvery = time.Millisecond
	recordHeartbeat = func(context.Context) error { return beat() }
	t.Cleanup(func() { heartbeatEvery, recordHeartbeat, serverLostLimit = oldEvery, oldRecord, oldLimit })
}

// cancelledBeat runs beat for an activity context the SDK cancelled with
// cause; stop ends it (the step is over).
func cancelledBeat(cause error) (h *stepHost, halt chan struct{}, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	h = newStepHost(nil)
	return h, h.halts.ch, beating(ctx, h)
}

// halted waits (a minute at most) for beat to halt the step.
func halted(t *testing.T, halt chan struct{}) {
	t.Helper()
	select {
	case <-halt:
	case <-time.After(time.Minute):
		t.Fatal("the step was not halted")
	}
}

// A heartbeat that finds the server without the activity (NotFound while
// the server restarts) cancels the SDK's context, but nobody asked for a
// stop: the step goes on, heartbeating through the client (the agent used
// to be killed and its attempt recorded as stopped).
func TestServerLossDoesNotHaltTheStep(t *testing.T) {
	beats := make(chan struct{}, 100)
	stubBeats(t, func() error { beats <- struct{}{}; return nil })
	for _, cause := range []error{serviceerror.NewNotFound("workflow execution not found"), &serviceerror.Unavailable{Message: "server restarting"}} {
		_, halt, stop := cancelledBeat(cause)
		for range 3 { // three heartbeats through the client, the step still going
			select {
			case <-beats:
			case <-time.After(time.Minute):
				t.Fatalf("%v: no heartbeat through the client", cause)
			}
		}
		stop()
		select {
		case <-halt:
			t.Errorf("%v: the step was halted", cause)
		default:
		}
	}
}

// Heartbeating through the client after a server loss, a cancellation the
// workflow asked for (orch stop) still halts the step, as stopped.
func TestServerLossThenStop(t *testing.T) {
	stubBeats(t, func() error { return temporal.NewCanceledError() })
	h, halt, stop := cancelledBeat(serviceerror.NewNotFound("not found"))
	defer stop()
	halted(t, halt)
	if f := h.Stopped(); f.Class != "stopped" {
		t.Errorf("a stop after a server loss: %+v", f)
	}
}

// A server that stays away past the heartbeat timeout has given the
// activity to another worker: the step is halted, saying so.
func TestServerLostForGood(t *testing.T) {
	stubBeats(t, func() error { return &serviceerror.Unavailable{Message: "connection refused"} })
	serverLostLimit = 20 * time.Millisecond
	h, halt, stop := cancelledBeat(serviceerror.NewNotFound("not found"))
	defer stop()
	halted(t, halt)
	if f := h.Stopped(); f.Class != "stopped" || !strings.Contains(f.Reason, "lost the activity") {
		t.Errorf("a server gone for good: %+v", f)
	}
}

// A requested cancellation halts the step at once, without a heartbeat
// through the client; a stopping worker past its drain grace hands the
// phase back (an activity error, not a result: the workflow dispatches it
// again).
func TestRequestedStopAndHandBack(t *testing.T) {
	stubBeats(t, func() error { t.Error("a heartbeat through the client after a requested stop"); return nil })
	h, halt, stop := cancelledBeat(temporal.NewCanceledError())
	halted(t, halt)
	stop()
	if f := h.Stopped(); f.Class != "stopped" {
		t.Errorf("orch stop: %+v", f)
	}
	h, halt, stop = cancelledBeat(worker.ErrWorkerShutdown)
	halted(t, halt)
	stop()
	f := h.Stopped()
	_, err := handedBack(fail(f.Class, "%s", f.Reason))
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != HandedBack || lostWhy(err) == "" {
		t.Errorf("a drained worker's phase: %+v, error %v: want it handed back", f, err)
	}
}
