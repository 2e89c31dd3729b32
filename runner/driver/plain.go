package driver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/spec"
)

func init() {
	plain := Kind{New: func() Driver { return &plainDriver{} }, Trivial: noPhases}
	Register("none", plain)
	Register("", plain)
}

// noPhases: an agent with neither prepare nor ready_check has nothing to
// do at WARNING and STANDBY.
func noPhases(a *spec.Agent) bool { return len(a.Prepare) == 0 && len(a.ReadyCheck) == 0 }

// plainDriver runs a protocol: none agent: prepare at WARNING, ready_check at
// STANDBY, the command at GO with the task as JSON on stdin; outputs come
// back through the file named by ORCH_OUTPUT.
type plainDriver struct {
	goIO   *proc.Stdio // the GO command's streams, made while it waits for GO
	goProc *proc.Process
}

func (d *plainDriver) Warning(a *Attempt) *attempt.Failure {
	if len(a.Agent.Prepare) == 0 {
		return nil
	}
	_, f := runStep(a, "prepare", a.Agent.Prepare, "", nil, nil, a.Timeouts.Standby, nil)
	return f
}

func (d *plainDriver) Standby(a *Attempt) *attempt.Failure {
	if len(a.Agent.ReadyCheck) == 0 {
		return nil
	}
	_, f := runStep(a, "ready_check", a.Agent.ReadyCheck, "", nil, nil, a.Timeouts.Standby, nil)
	return f
}

// PrepareGo makes the GO command's pipes before GO comes, off the path from
// the decision to the process.
func (d *plainDriver) PrepareGo(*Attempt) {
	d.goIO, _ = proc.NewStdio(true) // on failure work tries again, and reports it
}

func (d *plainDriver) Work(a *Attempt, t *attempt.Task) (map[string]any, *attempt.Failure) {
	// The agent creates the file when it writes an output (>> does): one
	// file operation fewer per attempt when it has nothing to say.
	outPath := filepath.Join(a.OutDir, fmt.Sprintf("%s.%s.%d.out", attempt.SafeName(a.Cue.ID), attempt.SafeName(a.Agent.ID), a.Number))
	// The task goes to stdin once the process is started, with the
	// blackboard as of the GO's commit, which came before.
	stdin := func() []byte {
		b, _ := json.Marshal(a.Host.Board(t))
		return b
	}
	vars, removeInputs, err := attempt.InputVars(t, strings.TrimSuffix(outPath, ".out")+".in")
	defer removeInputs()
	if err != nil {
		return nil, attempt.Failf("start", "command: writing a large input to a file: %v", err)
	}
	s := d.goIO
	d.goIO = nil
	p, f := runStep(a, "command", a.Agent.Command, a.Agent.Run, s, stdin, a.Timeouts.Go, a.Host.Env(append(vars, "ORCH_OUTPUT="+outPath)...))
	d.goProc = p
	if f != nil {
		return nil, f
	}
	outputs, err := attempt.ReadOutputFile(outPath)
	if err != nil {
		return nil, attempt.Failf("malfunction", "%v", err)
	}
	return outputs, nil
}

func (d *plainDriver) Close(a *Attempt) (int, *int) {
	if d.goIO != nil { // stopped before GO
		d.goIO.Close()
		d.goIO = nil
	}
	if d.goProc == nil {
		return 0, nil
	}
	e := d.goProc.Exit()
	if e.Signaled {
		return d.goProc.PID(), nil
	}
	return d.goProc.PID(), &e.Code
}

// runStep runs one process of a plain agent to its end within timeout,
// logging its output, and classifies how it ended. s are its streams, made
// beforehand with a stdin pipe (the GO command's), or nil: made here. stdin,
// when not nil, makes what is written to the process's stdin after it
// started. A nil env means the agent's environment without a task. Its
// output may still be being read when runStep returns: the attempt waits
// for it after it has reported its end (Host.Started).
func runStep(a *Attempt, step string, argv []string, shell string, s *proc.Stdio, stdin func() []byte, timeout time.Duration, env []string) (*proc.Process, *attempt.Failure) {
	if env == nil {
		env = a.Host.Env()
	}
	if s == nil {
		var err error
		if s, err = proc.NewStdio(stdin != nil); err != nil {
			return nil, attempt.Failf("start", "%s: %v", step, err)
		}
	}
	spec := proc.Spec{Argv: argv, Shell: shell, Dir: a.Dir, Env: env, Token: a.Token, Stdio: s, Cgroup: a.Cgroup, Grace: a.Timeouts.Grace}
	p, err := proc.Start(spec)
	if err != nil {
		return nil, attempt.Failf("start", "%s: %v", step, err)
	}
	p.ReadOutput(logLines(logWriter(a, "stdout")), logLines(logWriter(a, "stderr")))
	a.Host.Started(p)
	if stdin != nil {
		writeStdin(p, stdin())
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var f *attempt.Failure
	select {
	case <-p.Done():
	case <-timer.C:
		f = attempt.Failf("timeout", "%s did not finish within %s", step, timeout)
		p.Terminate(a.Timeouts.Grace)
	case <-a.Halt:
		f = a.Host.Stopped()
		p.Terminate(a.Timeouts.Grace)
	}
	<-p.Done()
	Sweep(a, p, step, f != nil)
	if f != nil {
		return p, f
	}
	e := p.Exit()
	switch {
	case e.Signaled:
		return p, attempt.Failf("signal", "%s was %s", step, e)
	case e.Code != 0:
		return p, attempt.Failf(fmt.Sprintf("exit:%d", e.Code), "%s %s", step, e)
	}
	return p, nil
}

// stdinAtOnce is the most of a task written to a process's stdin in the
// caller's goroutine: POSIX's least PIPE_BUF. A pipe holds at least that
// much, so a write that size to a new pipe never waits for the reader.
const stdinAtOnce = 512

// writeStdin writes b to the process's stdin and closes it: at once when b
// is small (most tasks), without a goroutine and its wake-ups; else from a
// goroutine of its own, as the process may never read it.
func writeStdin(p *proc.Process, b []byte) {
	write := func() {
		_, _ = p.Stdin().Write(b) // an agent that never reads its task gets EPIPE: fine
		_ = p.Stdin().Close()
	}
	if len(b) <= stdinAtOnce {
		write()
		return
	}
	go write()
}

// Sweep stops what a process of attempt a (its step: prepare, command...)
// left and says so: what it left in its process group (unless it was
// killed: then that is expected), and with a cgroup what escaped the
// group. Without a cgroup, descendants that escaped the group are the
// run's sweeper's job.
func Sweep(a *Attempt, p *proc.Process, step string, killed bool) {
	inGroup, escaped := p.Sweep(a.Timeouts.Grace, killed)
	if len(inGroup) > 0 && !killed {
		a.Host.Note("%s left %d process(es) running in its process group; stopped them", step, len(inGroup))
	}
	if len(escaped) > 0 {
		a.Host.Note("%d process(es) of %s escaped its process group (setsid); stopped them: pids %v", len(escaped), step, escaped)
	}
}
