package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/spec"
)

func init() {
	plain := driverKind{new: func() driver { return &plainDriver{} },
		trivial: func(a *spec.Agent) bool { return len(a.Prepare) == 0 && len(a.ReadyCheck) == 0 }}
	registerDriver("none", plain)
	registerDriver("", plain)
}

// plainDriver runs a protocol: none agent: prepare at WARNING, ready_check at
// STANDBY, the command at GO with the task as JSON on stdin; outputs come
// back through the file named by ORCH_OUTPUT.
type plainDriver struct {
	goIO   *proc.Stdio // the GO command's streams, made while it waits for GO
	goProc *proc.Process
}

func (d *plainDriver) warning(a *attemptRun) *attempt.Failure {
	if len(a.agent.Prepare) == 0 {
		return nil
	}
	_, f := a.runStep("prepare", a.agent.Prepare, "", nil, nil, a.standbyTimeout(), nil)
	return f
}

func (d *plainDriver) standby(a *attemptRun) *attempt.Failure {
	if len(a.agent.ReadyCheck) == 0 {
		return nil
	}
	_, f := a.runStep("ready_check", a.agent.ReadyCheck, "", nil, nil, a.standbyTimeout(), nil)
	return f
}

// prepareGo makes the GO command's pipes before GO comes, off the path from
// the decision to the process.
func (d *plainDriver) prepareGo(*attemptRun) {
	d.goIO, _ = proc.NewStdio(true) // on failure work tries again, and reports it
}

func (d *plainDriver) work(a *attemptRun, t *attempt.Task) (map[string]any, *attempt.Failure) {
	// The agent creates the file when it writes an output (>> does): one
	// file operation fewer per attempt when it has nothing to say.
	outPath := filepath.Join(a.r.workDir, fmt.Sprintf("%s.%s.%d.out", attempt.SafeName(a.cue.ID), attempt.SafeName(a.agent.ID), a.number))
	// The task goes to stdin once the process is started, with the
	// blackboard as of the GO's commit, which came before.
	stdin := func() []byte {
		b, _ := json.Marshal(a.withBlackboard(t))
		return b
	}
	inDir := strings.TrimSuffix(outPath, ".out") + ".in"
	defer os.RemoveAll(inDir)
	vars, err := attempt.InputVars(t, inDir)
	if err != nil {
		return nil, attempt.Failf("start", "command: writing a large input to a file: %v", err)
	}
	s := d.goIO
	d.goIO = nil
	p, f := a.runStep("command", a.agent.Command, a.agent.Run, s, stdin, a.goTimeout(), a.env(append(vars, "ORCH_OUTPUT="+outPath)...))
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

func (d *plainDriver) close(a *attemptRun) (int, *int) {
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
// for it after it has reported its end (see attempt.run).
func (a *attemptRun) runStep(step string, argv []string, shell string, s *proc.Stdio, stdin func() []byte, timeout time.Duration, env []string) (*proc.Process, *attempt.Failure) {
	if env == nil {
		env = a.env()
	}
	if s == nil {
		var err error
		if s, err = proc.NewStdio(stdin != nil); err != nil {
			return nil, attempt.Failf("start", "%s: %v", step, err)
		}
	}
	spec := proc.Spec{Argv: argv, Shell: shell, Dir: a.dir(), Env: env, Token: a.token, Stdio: s, Cgroup: a.r.sweeper.Cgroup(), Grace: a.r.grace}
	p, err := proc.Start(spec)
	if err != nil {
		return nil, attempt.Failf("start", "%s: %v", step, err)
	}
	p.ReadOutput(logLines(a.logWriter("stdout")), logLines(a.logWriter("stderr")))
	a.procs = append(a.procs, p)
	if stdin != nil {
		go func() {
			_, _ = p.Stdin().Write(stdin()) // an agent that never reads its task gets EPIPE: fine
			_ = p.Stdin().Close()
		}()
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var f *attempt.Failure
	select {
	case <-p.Done():
	case <-timer.C:
		f = attempt.Failf("timeout", "%s did not finish within %s", step, timeout)
		p.Terminate(a.r.grace)
	case <-a.halt:
		f = a.stopped()
		p.Terminate(a.r.grace)
	}
	<-p.Done()
	a.sweep(p, step, f != nil)
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

// sweep stops what the process left and says so: what it left in its
// process group (unless it was killed: then that is expected), and with a
// cgroup what escaped the group. Without a cgroup, descendants that escaped
// the group are the run's sweeper's job.
func (a *attemptRun) sweep(p *proc.Process, step string, killed bool) {
	inGroup, escaped := p.Sweep(a.r.grace, killed)
	if len(inGroup) > 0 && !killed {
		a.note("%s left %d process(es) running in its process group; stopped them", step, len(inGroup))
	}
	if len(escaped) > 0 {
		a.note("%d process(es) of %s escaped its process group (setsid); stopped them: pids %v", len(escaped), step, escaped)
	}
}

// lineWriter turns an output stream into log lines. A line longer than
// MaxLine is read on for secretSlack more bytes (the rest is dropped, with a
// marker), so that the log can mask it, then cut it at MaxLine (logCap,
// cutLine): a secret straddling the cut is masked whole.
type lineWriter struct {
	mu   sync.Mutex
	emit func(string)
	buf  []byte
	cut  bool
}

// secretSlack is how far past MaxLine a line is kept until it is masked: a
// secret up to that long straddling MaxLine is masked, not cut in two.
const secretSlack = 64 << 10

// cutMarker ends a line that was cut.
const cutMarker = " [line cut at 1 MiB]"

func (a *attemptRun) logWriter(stream string) *lineWriter {
	return &lineWriter{emit: func(s string) { a.log(stream, s) }}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	const limit = attempt.MaxLine + secretSlack
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if len(w.buf)+len(chunk) > limit {
			w.cut = true
		}
		if room := limit - len(w.buf); room > 0 {
			w.buf = append(w.buf, chunk[:min(len(chunk), room)]...)
		}
		if i < 0 {
			break
		}
		w.line()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) line() {
	s := strings.TrimRight(string(w.buf), "\r")
	if w.cut {
		s += cutMarker
	}
	w.emit(s)
	w.buf, w.cut = w.buf[:0], false
}

// cutLine masks a line longer than MaxLine (lineWriter kept some more of
// it), then cuts it at MaxLine: mask, then cut.
func cutLine(text string, d *redact.Redactor) string {
	text, cut := strings.CutSuffix(text, cutMarker)
	text = d.Text(text)
	if len(text) > attempt.MaxLine {
		text, cut = text[:attempt.MaxLine], true
	}
	if cut {
		text += cutMarker
	}
	return text
}

// flush emits a last line without a newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 || w.cut {
		w.line()
	}
}
