//go:build unix

package temporal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/orch-cli/orch/runner/proc"
)

// startWaiting starts an agent that waits for the file beat (the stubbed
// client heartbeat creates it) and then exits 0; it gives up after a minute.
func startWaiting(t *testing.T, beat string) *proc.Process {
	t.Helper()
	s, err := proc.NewStdio(false)
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`i=0; while [ ! -e %q ]; do i=$((i+1)); [ $i -lt 6000 ] || exit 9; sleep 0.01; done`, beat)
	pr, err := proc.Start(proc.Spec{Shell: script, Dir: t.TempDir(), Env: os.Environ(), Token: "rtest/temporal/", Stdio: s, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pr.ReadOutput(func(r io.Reader) { _, _ = io.Copy(io.Discard, r) }, func(r io.Reader) { _, _ = io.Copy(io.Discard, r) })
	return pr
}

// stubBeats makes the heartbeats after a server loss call beat, quickly.
func stubBeats(t *testing.T, beat func() error) {
	t.Helper()
	oldEvery, oldRecord, oldLimit := heartbeatEvery, recordHeartbeat, serverLostLimit
	heartbeatEvery = 10 * time.Millisecond
	recordHeartbeat = func(context.Context) error { return beat() }
	t.Cleanup(func() { heartbeatEvery, recordHeartbeat, serverLostLimit = oldEvery, oldRecord, oldLimit })
}

// cancelledBy is an activity context the SDK cancelled with cause.
func cancelledBy(cause error) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	return ctx
}

// A heartbeat that finds the server without the activity (NotFound while
// the server restarts) cancels the SDK's context, but nobody asked for a
// stop: the agent goes on, heartbeating through the client, and its result
// is its own (it used to be killed and recorded as stopped).
func TestServerLossDoesNotKillTheAgent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "beat")
	beats := 0
	stubBeats(t, func() error {
		beats++
		return os.WriteFile(file, nil, 0o644) // the server is back: the agent may finish
	})
	pr := startWaiting(t, file)
	res := (&Activities{}).wait(cancelledBy(serviceerror.NewNotFound("workflow execution not found")), pr, "command", time.Minute, time.Second)
	if res.Failed || beats == 0 {
		t.Fatalf("after a NotFound heartbeat: %+v (client heartbeats %d), want the agent's own success", res, beats)
	}
}

// Heartbeating through the client after a server loss, a cancellation the
// workflow asked for (orch stop) still stops the agent.
func TestServerLossThenStop(t *testing.T) {
	stubBeats(t, func() error { return temporal.NewCanceledError() })
	pr := startWaiting(t, filepath.Join(t.TempDir(), "never"))
	res := (&Activities{}).wait(cancelledBy(&serviceerror.Unavailable{Message: "server restarting"}), pr, "command", time.Minute, time.Second)
	if !res.Failed || res.Class != "stopped" {
		t.Fatalf("a stop asked for after a server loss: %+v", res)
	}
}

// A server that stays away past the heartbeat timeout has given the
// activity to another worker: the agent is stopped.
func TestServerLostForGood(t *testing.T) {
	stubBeats(t, func() error { return &serviceerror.Unavailable{Message: "connection refused"} })
	serverLostLimit = 50 * time.Millisecond
	pr := startWaiting(t, filepath.Join(t.TempDir(), "never"))
	res := (&Activities{}).wait(cancelledBy(serviceerror.NewNotFound("not found")), pr, "command", time.Minute, time.Second)
	if !res.Failed || res.Class != "stopped" || !strings.Contains(res.Reason, "lost the activity") {
		t.Fatalf("a server gone for good: %+v", res)
	}
}

// A requested cancellation stops the agent at once, and a stopping worker
// past its drain grace hands the phase back (an activity error, not a
// result), without a heartbeat through the client.
func TestRequestedStopAndHandBack(t *testing.T) {
	stubBeats(t, func() error { t.Error("a heartbeat through the client after a requested stop"); return nil })
	pr := startWaiting(t, filepath.Join(t.TempDir(), "never"))
	if res := (&Activities{}).wait(cancelledBy(temporal.NewCanceledError()), pr, "command", time.Minute, time.Second); res.Class != "stopped" {
		t.Errorf("orch stop: %+v", res)
	}
	pr = startWaiting(t, filepath.Join(t.TempDir(), "never"))
	res := (&Activities{}).wait(cancelledBy(worker.ErrWorkerShutdown), pr, "command", time.Minute, time.Second)
	_, err := handedBack(res)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != HandedBack || lostWhy(err) == "" {
		t.Errorf("a drained worker's phase: %+v, error %v: want it handed back", res, err)
	}
}
