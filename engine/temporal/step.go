package temporal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/spec"
)

// maxLogTail is how many of an attempt's last output lines go back with
// its result (and so into the run's store): the workflow's history must stay
// small.
const maxLogTail = 200

// heartbeatEvery is how often a running step tells Temporal it is alive
// (and learns whether it was cancelled).
var heartbeatEvery = 5 * time.Second

// step runs one process of a plain agent (prepare, ready_check or the
// command) to its end, as the local runner's plain driver does: its own
// process group, the task on stdin and in ORCH_* variables, outputs from
// ORCH_OUTPUT; cancelled (orch stop, the run's end), its group is killed.
func (a *Activities) step(ctx context.Context, p *planner.Plan, c *planner.Cue, ag *spec.Agent, in AttemptInput, step string, argv []string, shell string, task *runner.Task) *AttemptResult {
	if len(argv) == 0 && shell == "" {
		return &AttemptResult{}
	}
	work, err := os.MkdirTemp("", "orch-temporal-"+in.RunID+"-")
	if err != nil {
		return fail("start", "%s: %v", step, err)
	}
	defer os.RemoveAll(work)
	env := agentEnv(ag, in, a)
	outPath := filepath.Join(work, "out")
	var stdin []byte
	if task != nil {
		vars, err := runner.InputVars(task, filepath.Join(work, "in"))
		if err != nil {
			return fail("start", "%s: writing a large input to a file: %v", step, err)
		}
		env = append(append(env, vars...), "ORCH_OUTPUT="+outPath)
		stdin, _ = json.Marshal(task)
	}
	s, err := proc.NewStdio(task != nil)
	if err != nil {
		return fail("start", "%s: %v", step, err)
	}
	grace := firstDuration(p.Cuelist.Defaults.KillGrace.D(), runner.DefaultKillGrace)
	// The attempt's token names its run, cue and number, then this try. A
	// try of the same attempt before it ran on a worker that was lost: if
	// that worker was on this machine, its agent may still run (orphaned,
	// with no one to stop it): kill it first, as orch resume does locally.
	attempt := fmt.Sprintf("%s/temporal/%s/%d/", in.RunID, in.Cue, in.Attempt)
	if info := activity.GetInfo(ctx); info.Attempt > 1 || in.Try > 1 {
		proc.KillTokened(attempt)
	}
	token := attempt + runner.NewRunID()
	pr, err := proc.Start(proc.Spec{Argv: argv, Shell: shell, Dir: agentDir(ag), Env: env, Token: token, Stdio: s, Grace: grace})
	if err != nil {
		return fail("start", "%s: %v", step, err)
	}
	tail := &logTail{}
	pr.ReadOutput(tail.reader("stdout"), tail.reader("stderr"))
	if stdin != nil {
		go func() {
			_, _ = pr.Stdin().Write(stdin) // an agent that never reads its task gets EPIPE: fine
			_ = pr.Stdin().Close()
		}()
	}
	timeout := firstDuration(p.Cuelist.Defaults.StandbyTimeout.D(), runner.DefaultStandbyTimeout)
	if task != nil {
		timeout = firstDuration(c.Timeout.D(), ag.Timeout.D(), p.Cuelist.Defaults.Timeout.D(), runner.DefaultTimeout)
	}
	res := a.wait(ctx, pr, step, timeout, grace)
	pr.WaitOutput()
	res.Log, res.PID = tail.lines(), pr.PID()
	if !res.Failed || res.Class != "stopped" && res.Class != "timeout" {
		if e := pr.Exit(); !e.Signaled {
			res.ExitCode = &e.Code
		}
	}
	if res.Failed || task == nil {
		return res
	}
	return outputs(res, outPath, ag)
}

// wait waits for the process, heartbeating; a timeout or a cancellation
// kills its group. A cancellation is a requested stop only when Temporal
// says so: when the SDK cancels because a heartbeat found the server
// without the activity (NotFound while it restarts) or unreachable, the
// agent goes on and the heartbeats go on through the client, until the
// server answers again (the agent is not killed by a short outage), asks
// for the stop, or has given the activity up (no heartbeat got through for
// HeartbeatTimeout: it is another worker's now). A worker stopping past its
// drain grace kills the agent and hands the phase back (HandedBack).
func (a *Activities) wait(ctx context.Context, pr *proc.Process, step string, timeout, grace time.Duration) *AttemptResult {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	beat := time.NewTicker(heartbeatEvery)
	defer beat.Stop()
	cancelled := ctx.Done()
	var lastBeat time.Time // since the server lost track: its last heartbeat that got through
	var res *AttemptResult
	for res == nil {
		select {
		case <-pr.Done():
			res = &AttemptResult{}
		case <-timer.C:
			res = fail("timeout", "%s did not finish within %s", step, timeout)
			pr.Terminate(grace)
		case <-cancelled:
			switch why := context.Cause(ctx); {
			case serverLost(why):
				cancelled, lastBeat = nil, time.Now()
			case errors.Is(why, worker.ErrWorkerShutdown):
				res = fail(HandedBack, "%s: its worker stopped (drain grace over) and handed it back", step)
				pr.Terminate(grace)
			default:
				res = fail("stopped", "stopped")
				pr.Terminate(grace)
			}
		case <-beat.C:
			if lastBeat.IsZero() {
				heartbeat(ctx)
				continue
			}
			switch err := recordHeartbeat(ctx); {
			case err == nil:
				lastBeat = time.Now()
			case temporal.IsCanceledError(err):
				res = fail("stopped", "stopped")
				pr.Terminate(grace)
			case time.Since(lastBeat) > serverLostLimit:
				res = fail("stopped", "%s: the Temporal server lost the activity for longer than its heartbeat timeout (%s): %v", step, serverLostLimit, err)
				pr.Terminate(grace)
			}
		}
	}
	<-pr.Done()
	inGroup, escaped := pr.Sweep(grace, res.Failed)
	if len(inGroup)+len(escaped) > 0 && !res.Failed {
		res.Log = append(res.Log, LogLine{Stream: "stderr", At: time.Now(), Text: fmt.Sprintf("[orch] %s left %d process(es) behind; stopped them", step, len(inGroup)+len(escaped))})
	}
	if res.Failed {
		return res
	}
	switch e := pr.Exit(); {
	case e.Signaled:
		return fail("signal", "%s was %s", step, e)
	case e.Code != 0:
		return fail("exit:"+strconv.Itoa(e.Code), "%s %s", step, e)
	}
	return res
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

// heartbeat tells Temporal the step is alive, outside an activity (tests
// calling step directly) too.
func heartbeat(ctx context.Context) {
	defer func() { _ = recover() }()
	activity.RecordHeartbeat(ctx)
}

// outputs reads ORCH_OUTPUT and checks the agent's provides contract.
func outputs(res *AttemptResult, path string, ag *spec.Agent) *AttemptResult {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		res.Outputs = map[string]any{}
	} else if err != nil {
		return withFail(res, "malfunction", err.Error())
	} else {
		data, err := io.ReadAll(io.LimitReader(f, runner.MaxOutputFile+1))
		f.Close()
		if err != nil {
			return withFail(res, "malfunction", err.Error())
		}
		if res.Outputs, err = runner.ParseOutputFile(data); err != nil {
			return withFail(res, "malfunction", err.Error())
		}
	}
	if why := runner.ContractFailure(ag, res.Outputs); why != "" {
		return withFail(res, "contract", why)
	}
	return res
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
	env := os.Environ()
	keys := make([]string, 0, len(ag.Env))
	for k := range ag.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+runner.Scalar(ag.Env[k]))
	}
	return append(env, "ORCH_RUN_ID="+in.RunID, "ORCH_CUE_ID="+in.Cue, "ORCH_AGENT_ID="+ag.ID,
		"ORCH_ATTEMPT="+strconv.Itoa(in.Attempt), "ORCH_DB="+a.DBPath, "ORCH_ROOT="+a.Root, "ORCH_ENGINE=temporal")
}

// agentDir is the agent's workdir, relative to the file that defines it.
func agentDir(ag *spec.Agent) string {
	base := ag.Dir()
	if ag.Workdir == "" {
		return base
	}
	if filepath.IsAbs(ag.Workdir) {
		return ag.Workdir
	}
	return filepath.Join(base, ag.Workdir)
}

// logTail keeps the last maxLogTail lines of a step's output.
type logTail struct {
	mu  sync.Mutex
	buf []LogLine
}

func (t *logTail) reader(stream string) func(io.Reader) {
	return func(r io.Reader) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), runner.MaxLine)
		for sc.Scan() {
			t.add(LogLine{Stream: stream, At: time.Now().UTC(), Text: sc.Text()})
		}
	}
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
