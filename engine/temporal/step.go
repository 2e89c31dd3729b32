package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// maxLogTail is how many of an attempt's last output lines go back with
// its result (and so into the run's store): the workflow's history must stay
// small.
const maxLogTail = 200

// heartbeatEvery is how often a running step tells Temporal it is alive
// (and learns whether it was cancelled).
var heartbeatEvery = 5 * time.Second

// phase is one of a plain agent's phases, each an activity.
type phase int

const (
	phaseWarning phase = iota // prepare
	phaseStandby              // ready_check
	phaseGo                   // the command, with the task
)

// attemptTokens is what the attempt tokens (ORCH_ATTEMPT_TOKEN) of an
// attempt's processes start with, on every worker: RUN/temporal/TASK/N/;
// each try adds its own part. A child's task id holds "/" (LEAD/1, LEAD's
// first child): it becomes ":", which no cue or item id holds, so that no
// attempt's tokens begin with another's (LEAD's attempt 1 with LEAD/1's):
// proc.KillTokened of one attempt kills nothing of another.
func attemptTokens(in AttemptInput) string {
	return fmt.Sprintf("%s/temporal/%s/%d/", in.RunID, strings.ReplaceAll(in.Cue, "/", ":"), in.Attempt)
}

// step runs one phase of a plain agent with the local runner's plain
// driver (runner/driver): its own process group, the task on stdin and in
// ORCH_* variables, outputs from ORCH_OUTPUT; cancelled (orch stop, the
// run's end), its group is killed. The activity heartbeats meanwhile.
func (a *Activities) step(ctx context.Context, p *planner.Plan, c *planner.Cue, ag *spec.Agent, in AttemptInput, ph phase, task *attempt.Task) *AttemptResult {
	if pooled(ag) {
		return a.stepPooled(ctx, p, c, ag, in, ph, task)
	}
	work, err := os.MkdirTemp("", "orch-temporal-"+in.RunID+"-")
	if err != nil {
		return fail("start", "%v", err)
	}
	defer os.RemoveAll(work)
	// The attempt's token names its run, cue and number, then this try. A
	// try of the same attempt before it ran on a worker that was lost: if
	// that worker was on this machine, its agent may still run (orphaned,
	// with no one to stop it): kill it first, as orch resume does locally.
	tokens := attemptTokens(in)
	if info := activity.GetInfo(ctx); info.Attempt > 1 || in.Try > 1 {
		proc.KillTokened(tokens)
	}
	c, dir, resolving := a.resolverAt(ctx, in, c, ag)
	var wt *wtPhase
	var wtFail *attempt.Failure
	if !resolving {
		wt, wtFail = a.openWorktree(ctx, in, ag, ph)
	}
	if wtFail != nil {
		return fail(wtFail.Class, "%s", wtFail.Reason)
	}
	if wt != nil {
		defer wt.remove()
		dir = wt.dir(ag)
		task = inWorktree(task, wt)
	}
	h := newStepHost(agentEnv(ag, in, a))
	h.Bind(ctx, a, in, p)
	at := &driver.Attempt{RunID: in.RunID, Cue: c, Agent: ag, Number: in.Attempt, Token: tokens + record.NewRunID(),
		Dir: dir, OutDir: work, Timeouts: attempt.TimeoutsOf(p.Cuelist, c, ag, attempt.KillGrace(p.Cuelist, 0)),
		Host: h, Halt: h.halts.ch, Abort: h.aborts.ch}
	defer a.attachMCP(at, h)()
	defer beating(ctx, h)()

	d := driver.Of(ag).New()
	var f *attempt.Failure
	var out map[string]any
	switch ph {
	case phaseWarning:
		f = d.Warning(at)
	case phaseStandby:
		f = d.Standby(at)
	default:
		out, f = d.Work(at, task)
	}
	h.End()
	d.Close(at)
	res := &AttemptResult{}
	if f != nil {
		res = fail(f.Class, "%s", f.Reason)
	}
	if pr := h.started; pr != nil {
		pr.WaitOutput()
		res.PID = pr.PID()
		if !res.Failed || res.Class != "stopped" && res.Class != "timeout" {
			if e := pr.Exit(); !e.Signaled {
				res.ExitCode = &e.Code
			}
		}
	}
	res.Log = redactLines(p, h.tail.lines())
	res.Messages, res.MessagesLeftOut = h.wire.take(p)
	if res.Failed || ph != phaseGo {
		return res
	}
	res.Outputs = out
	if wt != nil {
		if res = wt.finish(ctx, in, ag, res); res.Failed {
			return res
		}
	}
	if f := attempt.CheckContract(ag, out); f != nil {
		return withFail(res, f.Class, f.Reason)
	}
	return res
}

// beating starts the phase's beat; the returned end stops it and waits for
// it to return: nothing of a phase's beat outlives the phase.
func beating(ctx context.Context, h *stepHost) (end func()) {
	done, over := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(over)
		beat(ctx, h, done)
	}()
	return func() { close(done); <-over }
}

// beat heartbeats until done; once a stop is asked for, it halts the step
// (h.halt: the driver stops it), saying why. A cancellation is a
// requested stop only when Temporal says so: when the SDK cancels because a
// heartbeat found the server without the activity (NotFound while it
// restarts) or unreachable, the agent goes on and the heartbeats go on
// through the client, until the server answers again (the agent is not
// killed by a short outage), asks for the stop, or has given the activity up
// (no heartbeat got through for serverLostLimit: it is another worker's
// now). A worker stopping past its drain grace hands the phase back.
//
// A cancellation found once done is closed is no stop: the phase is over
// (the SDK cancels the context when the activity returned; a pooled
// agent's attempt keeps its halt for its next phases).
func beat(ctx context.Context, h *stepHost, done chan struct{}) {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	cancelled := ctx.Done()
	var lastBeat time.Time // since the server lost track: the last heartbeat that got through
	for {
		select {
		case <-done:
			return
		case <-cancelled:
			select {
			case <-done: // the activity's end, not a stop
				return
			default:
			}
			switch why := context.Cause(ctx); {
			case serverLost(why):
				cancelled, lastBeat = nil, time.Now()
				continue
			case errors.Is(why, worker.ErrWorkerShutdown):
				h.halt(attempt.Failf(HandedBack, "its worker stopped (drain grace over) and handed it back"))
			default:
				h.halt(nil)
			}
			return
		case <-t.C:
			if lastBeat.IsZero() {
				heartbeat(ctx)
				continue
			}
			switch err := recordHeartbeat(ctx); {
			case err == nil:
				lastBeat = time.Now()
			case temporal.IsCanceledError(err):
				h.halt(nil)
				return
			case time.Since(lastBeat) > serverLostLimit:
				h.halt(attempt.Failf("stopped", "the Temporal server lost the activity for longer than its heartbeat timeout (%s): %v", serverLostLimit, err))
				return
			}
		}
	}
}

// serverLost: the SDK cancelled the activity because a heartbeat found the
// server without it or unreachable, not because anyone asked.
func serverLost(cause error) bool {
	var notFound *serviceerror.NotFound
	var unavailable *serviceerror.Unavailable
	var nsInactive *serviceerror.NamespaceNotActive
	return errors.As(cause, &notFound) || errors.As(cause, &unavailable) || errors.As(cause, &nsInactive)
}

// serverLostLimit is how long an agent goes on while no heartbeat gets
// through: past it, the server has given the activity to another worker.
var serverLostLimit = HeartbeatTimeout

// recordHeartbeat heartbeats through the worker's client, once the SDK's
// own heartbeats stopped with the activity's context.
var recordHeartbeat = func(actx context.Context) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return activity.GetClient(actx).RecordActivityHeartbeat(ctx, activity.GetInfo(actx).TaskToken)
}

// stepHost is a driver's host on a Temporal worker: the attempt's
// environment, its output kept in a bounded tail that goes back with the
// result (notes too, as orch's lines), the stop, and its agent's requests,
// which go to the run's workflow (hub.go).
type stepHost struct {
	env     []string
	tail    logTail
	started *proc.Process
	mu      sync.Mutex
	wire    wireLog      // the phase's protocol messages (wirelog.go)
	hub     hubLink      // the phase running now: where requests go
	usage   record.Usage // what the agent reported so far (its totals)
	aborts  aborter
	halts   halter
}

func newStepHost(env []string) *stepHost {
	return &stepHost{env: env, aborts: aborter{ch: make(chan struct{})}, halts: halter{ch: make(chan struct{})}}
}

var _ driver.Host = (*stepHost)(nil)

func (h *stepHost) Env(extra ...string) []string { return append(slices.Clip(h.env), extra...) }
func (h *stepHost) Log(stream, text string) {
	h.tail.add(LogLine{Stream: stream, At: time.Now().UTC(), Text: text})
}
func (h *stepHost) CloseLog() {}
func (h *stepHost) Note(format string, args ...any) {
	h.Log("stderr", "[orch] "+fmt.Sprintf(format, args...))
}
func (h *stepHost) Board(t *attempt.Task) *attempt.Task { return t }
func (h *stepHost) Started(p *proc.Process)             { h.started = p }
func (h *stepHost) Record(dir string, m *driver.Wire) *attempt.Failure {
	h.wire.add(dir, m)
	return nil
}
func (h *stepHost) Stopped() *attempt.Failure {
	if f := h.halts.f; f != nil {
		return f
	}
	return attempt.Failf("stopped", "stopped")
}

// halter stops an attempt (driver.Attempt.Halt), once: a pooled agent's
// attempt keeps it over its phases, each with its beat.
type halter struct {
	once sync.Once
	ch   chan struct{}
	f    *attempt.Failure // why (nil: a stop asked for)
}

// halt stops the attempt, f saying why; later calls do nothing.
func (h *stepHost) halt(f *attempt.Failure) {
	h.halts.once.Do(func() {
		h.halts.f = f
		close(h.halts.ch)
	})
}

// heartbeat tells Temporal the step is alive, outside an activity (tests
// calling step directly) too.
func heartbeat(ctx context.Context) {
	defer func() { _ = recover() }()
	activity.RecordHeartbeat(ctx)
}

func withFail(res *AttemptResult, class, reason string) *AttemptResult {
	res.Failed, res.Class, res.Reason, res.Outputs = true, class, reason, nil
	return res
}

func fail(class, format string, args ...any) *AttemptResult {
	return &AttemptResult{Failed: true, Class: class, Reason: fmt.Sprintf(format, args...)}
}

// agentEnv is the environment of the agent's processes: the worker's own,
// the agent's env, and the ORCH_* variables of the attempt.
func agentEnv(ag *spec.Agent, in AttemptInput, a *Activities) []string {
	env := attempt.Environ(os.Environ(), ag.Env)
	env = append(env, attempt.OrchVars(in.RunID, in.Cue, ag.ID, in.Attempt, a.DBPath, a.Root)...)
	return append(env, "ORCH_ENGINE=temporal")
}

// logTail keeps the last maxLogTail lines of a step's output.
type logTail struct {
	mu  sync.Mutex
	buf []LogLine
}

func (t *logTail) add(l LogLine) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, l)
	if len(t.buf) > 2*maxLogTail {
		t.buf = append([]LogLine(nil), t.buf[len(t.buf)-maxLogTail:]...)
	}
}

// take returns the lines kept and forgets them: a pooled attempt's next
// phase returns its own.
func (t *logTail) take() []LogLine {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.buf
	if len(l) > maxLogTail {
		l = l[len(l)-maxLogTail:]
	}
	t.buf = nil
	return l
}

func (t *logTail) lines() []LogLine {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > maxLogTail {
		return t.buf[len(t.buf)-maxLogTail:]
	}
	return t.buf
}
