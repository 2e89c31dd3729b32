package temporal

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
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

// step runs one phase of a plain agent with the local runner's plain
// driver (runner/driver): its own process group, the task on stdin and in
// ORCH_* variables, outputs from ORCH_OUTPUT; cancelled (orch stop, the
// run's end), its group is killed. The activity heartbeats meanwhile.
func (a *Activities) step(ctx context.Context, p *planner.Plan, c *planner.Cue, ag *spec.Agent, in AttemptInput, ph phase, task *attempt.Task) *AttemptResult {
	work, err := os.MkdirTemp("", "orch-temporal-"+in.RunID+"-")
	if err != nil {
		return fail("start", "%v", err)
	}
	defer os.RemoveAll(work)
	// The attempt's token names its run, cue and number, then this try. A
	// try of the same attempt before it ran on a worker that was lost: if
	// that worker was on this machine, its agent may still run (orphaned,
	// with no one to stop it): kill it first, as orch resume does locally.
	tokens := fmt.Sprintf("%s/temporal/%s/%d/", in.RunID, in.Cue, in.Attempt)
	if info := activity.GetInfo(ctx); info.Attempt > 1 {
		proc.KillTokened(tokens)
	}
	halt := make(chan struct{})
	h := &stepHost{env: agentEnv(ag, in, a)}
	at := &driver.Attempt{RunID: in.RunID, Cue: c, Agent: ag, Number: in.Attempt, Token: tokens + record.NewRunID(),
		Dir: attempt.Workdir(ag), OutDir: work, Timeouts: attempt.TimeoutsOf(p.Cuelist, c, ag, attempt.KillGrace(p.Cuelist, 0)),
		Host: h, Halt: halt}
	done := make(chan struct{})
	defer close(done)
	go beat(ctx, halt, done)

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
	res.Log = h.tail.lines()
	if res.Failed || ph != phaseGo {
		return res
	}
	res.Outputs = out
	if f := attempt.CheckContract(ag, out); f != nil {
		return withFail(res, f.Class, f.Reason)
	}
	return res
}

// beat heartbeats until done; once Temporal says the activity is
// cancelled, it closes halt (the driver stops the step).
func beat(ctx context.Context, halt, done chan struct{}) {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			close(halt)
			return
		case <-t.C:
			heartbeat(ctx)
		}
	}
}

// stepHost is the plain driver's host on a Temporal worker: the attempt's
// environment, its output kept in a bounded tail that goes back with the
// result (notes too, as orch's lines), the stop. A plain agent asks nothing
// and sends no messages.
type stepHost struct {
	env     []string
	tail    logTail
	started *proc.Process
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
func (h *stepHost) Usage(record.Usage)                           {}
func (h *stepHost) Board(t *attempt.Task) *attempt.Task          { return t }
func (h *stepHost) Started(p *proc.Process)                      { h.started = p }
func (h *stepHost) Going(driver.Peer)                            {}
func (h *stepHost) Record(string, *driver.Wire) *attempt.Failure { return nil }
func (h *stepHost) Stopped() *attempt.Failure                    { return attempt.Failf("stopped", "stopped") }
func (h *stepHost) Failure() *attempt.Failure                    { return nil }
func (h *stepHost) AskPerson(protocols.QuestionAsk, []record.QuestionOption, func(string)) *attempt.Failure {
	return attempt.Failf("internal", "the Temporal engine runs plain agents only: no one to ask")
}
func (h *stepHost) Serve(driver.Peer, *driver.Wire, func() *driver.Wire) *attempt.Failure {
	return attempt.Failf("internal", "the Temporal engine runs plain agents only: no requests to serve")
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

func (t *logTail) lines() []LogLine {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > maxLogTail {
		return t.buf[len(t.buf)-maxLogTail:]
	}
	return t.buf
}
