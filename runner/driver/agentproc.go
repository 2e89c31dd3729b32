package driver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// agentProcess is a protocol: jsonl agent's process. It is started at the
// first WARNING one of the agent's cues needs and then serves cue after cue
// (up to the agent's concurrency at once, each message naming its cue) until
// the run ends, it exits, or it misbehaves: a specialist standing by, not a
// process per attempt. A process that breaks the protocol or hangs is
// stopped, and the next attempt gets a fresh one.
type agentProcess struct {
	run   Run
	agent *spec.Agent
	token string
	p     *proc.Process
	w     *protocols.Writer
	errw  *lineWriter
	logs  Log // the budget of its stderr lines that no attempt is using it for

	mu      sync.Mutex
	replies map[string]func(*Wire)  // by the id of the message waiting for its answer
	stopped map[string]bool         // ids of messages whose cue was stopped before their answer came
	active  map[string]*jsonlDriver // the attempts using the process, by cue
	last    *jsonlDriver            // the latest attempt to use it: stderr is logged as its
	broken  *attempt.Failure        // why the process is unusable; set once
	done    chan struct{}           // closed when broken
	lines   int
	closed  chan struct{} // closed when the process is gone and swept
	errRead chan struct{} // closed when its stderr is read to the end
	once    sync.Once

	// the reader goroutine's: the agent's message rate (see throttle)
	limiter   *rate.Limiter
	throttled int
	warnedAt  time.Time
}

// process returns the agent's healthy process, starting one if needed.
func (g *Agents) process(a *Attempt) (*agentProcess, *attempt.Failure) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ap := g.procs[a.Agent.ID]; ap != nil && ap.healthy() {
		return ap, nil
	}
	ap := &agentProcess{run: g.run, agent: a.Agent, token: fmt.Sprintf("%s/agent/%s/%s", g.run.ID, a.Agent.ID, record.NewRunID()),
		replies: map[string]func(*Wire){}, stopped: map[string]bool{}, active: map[string]*jsonlDriver{}, done: make(chan struct{}), closed: make(chan struct{}), errRead: make(chan struct{})}
	s, err := proc.NewStdio(true)
	if err != nil {
		return nil, attempt.Failf("start", "%v", err)
	}
	ap.errw = &lineWriter{emit: ap.logLine}
	ap.logs = g.run.Host.NewLog()
	g.run.Sweeper.Begin(ap.token)
	p, err := proc.Start(proc.Spec{Argv: a.Agent.Command, Shell: a.Agent.Run, Dir: attempt.Workdir(a.Agent), Env: a.Host.Env(),
		Token: ap.token, Stdio: s, Cgroup: g.run.Sweeper.Cgroup(), Grace: g.run.Grace})
	if err != nil {
		g.run.Sweeper.End(ap.token)
		return nil, attempt.Failf("start", "%v", err)
	}
	ap.p = p
	ap.w = protocols.NewWriter(p.Stdin())
	// Its stdout goes straight to the reader of its messages.
	logErr := logLines(ap.errw)
	p.ReadOutput(ap.read, func(r io.Reader) { defer close(ap.errRead); logErr(r) })
	g.procs[a.Agent.ID] = ap
	g.all = append(g.all, ap)
	return ap, nil
}

// expect registers what to do with the answer to message id (called from
// the reader goroutine: it must not block); unexpect forgets it.
func (ap *agentProcess) expect(id string, answer func(*Wire)) *attempt.Failure {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	if ap.broken != nil {
		return ap.broken
	}
	ap.replies[id] = answer
	return nil
}

func (ap *agentProcess) unexpect(id string) {
	ap.mu.Lock()
	delete(ap.replies, id)
	ap.mu.Unlock()
}

// abandon forgets the message id whose cue orch stopped while it waited
// for the answer: the agent's handler may still answer it (protocols/agent
// answers task.failed when its ctx is cancelled), and that late answer is
// dropped, not taken for a malfunction that would break a process still
// serving other cues. An answer that came already took its waiter with it;
// otherwise the id is kept until its answer comes.
func (ap *agentProcess) abandon(id string) {
	ap.mu.Lock()
	if _, waiting := ap.replies[id]; waiting {
		delete(ap.replies, id)
		ap.stopped[id] = true
	}
	ap.mu.Unlock()
}

func (ap *agentProcess) healthy() bool {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return ap.broken == nil
}

// fail marks the process unusable (once) and stops it: every attempt using
// it learns why through done.
func (ap *agentProcess) fail(f *attempt.Failure) {
	ap.mu.Lock()
	if ap.broken != nil {
		ap.mu.Unlock()
		return
	}
	ap.broken = f
	close(ap.done)
	ap.mu.Unlock()
	go ap.shutdown(false)
}

// failure is why the process is unusable (after done is closed).
func (ap *agentProcess) failure() *attempt.Failure {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return ap.broken
}

// shutdown ends the process: EOF on its stdin first when it is healthy (a
// well-behaved agent exits), then its process group is stopped and swept.
func (ap *agentProcess) shutdown(gentle bool) {
	ap.once.Do(func() { ap.stop(gentle) })
	<-ap.closed
}

func (ap *agentProcess) stop(gentle bool) {
	defer close(ap.closed)
	if gentle {
		_ = ap.p.Stdin().Close()
		select {
		case <-ap.p.Done():
		case <-time.After(ap.run.Grace):
		}
	}
	ap.p.Terminate(ap.run.Grace)
	inGroup, escaped := ap.p.Sweep(ap.run.Grace, true)
	if len(inGroup) > 0 && gentle {
		ap.note(fmt.Sprintf("agent %s left %d process(es) in its process group; stopped them", ap.agent.ID, len(inGroup)))
	}
	if len(escaped) > 0 {
		ap.note(fmt.Sprintf("%d process(es) of agent %s escaped its process group (setsid); stopped them: pids %v", len(escaped), ap.agent.ID, escaped))
	}
	ap.p.WaitOutput() // its last lines of stderr are logged
	ap.logs.Close(record.LogLine{RunID: ap.run.ID, Agent: ap.agent.ID, Stream: "stderr"})
	ap.mu.Lock()
	last := ap.last
	ap.mu.Unlock()
	if last != nil { // what it printed after its last attempt ended
		last.a.Host.CloseLog()
	}
	ap.run.Sweeper.End(ap.token)
}

func (ap *agentProcess) note(reason string) {
	_ = ap.run.Host.Publish(record.Event{RunID: ap.run.ID, At: time.Now().UTC(), Type: record.EvNote, Agent: ap.agent.ID, Reason: reason})
}

// read turns the agent's stdout into messages: replies go to the exchange
// waiting for them, requests to the attempt they are for. A line that is not
// a message, or stdout closing, breaks the process.
func (ap *agentProcess) read(r io.Reader) {
	rd := protocols.NewReader(r, attempt.MaxLine)
	for {
		msg, raw, err := rd.Next()
		ap.mu.Lock()
		ap.lines++
		line := ap.lines
		ap.mu.Unlock()
		var de *protocols.DecodeError
		switch {
		case errors.As(err, &de):
			ap.fail(attempt.Failf("malfunction", "line %d from the agent is not a protocol message: %v", line, err))
			return
		case err != nil:
			ap.outputClosed()
			return
		}
		ap.throttle(msg)
		ap.deliver(msg, raw)
	}
}

// exitAfterEOF is how long an agent's process may take to exit once its
// stdout is closed: an exit closes it first, and its status says more than
// the end of its output.
const exitAfterEOF = 2 * time.Second

// outputClosed breaks the process whose stdout has ended: it exited, or it
// closed its output and can answer nothing more (a malfunction at once,
// not at the phase's timeout).
func (ap *agentProcess) outputClosed() {
	timer := time.NewTimer(exitAfterEOF)
	defer timer.Stop()
	select {
	case <-ap.p.Done():
		// Its last lines of stderr first: the attempts using it log them
		// before they learn it is gone (a phase on a Temporal worker returns
		// its lines with its result). A process it left may hold stderr
		// open: the exit is told after exitAfterEOF at the latest.
		select {
		case <-ap.errRead:
		case <-timer.C:
		}
		ap.fail(exitFailure(ap.p.Exit(), "while serving its cues"))
	case <-timer.C:
		ap.fail(attempt.Failf("malfunction", "the agent closed its output while still running"))
	}
}

func (ap *agentProcess) deliver(msg protocols.Message, raw []byte) {
	ap.mu.Lock()
	waiter := ap.replies[msg.InReplyTo]
	if waiter != nil {
		delete(ap.replies, msg.InReplyTo)
	}
	late := waiter == nil && isReplyType(msg.Type) && ap.stopped[msg.InReplyTo]
	if late {
		delete(ap.stopped, msg.InReplyTo)
	}
	d := ap.attemptFor(msg)
	ap.mu.Unlock()
	if waiter != nil { // the waiter has it recorded before acting on it
		waiter(&Wire{Msg: msg, Raw: append([]byte(nil), raw...)})
		return
	}
	if late { // its attempt ended stopped and was recorded so
		return
	}
	switch {
	case isReplyType(msg.Type):
		if d != nil {
			_ = d.a.Host.Record("in", &Wire{Msg: msg, Raw: raw})
		}
		ap.fail(attempt.Failf("malfunction", "%s answers no request (in_reply_to %q)", msg.Type, msg.InReplyTo))
	case d == nil:
		_ = ap.send(nil, protocols.Reply(msg, protocols.ProtocolError{Reason: msg.Type + ": no cue of this agent is in GO"}))
	default: // the attempt records it before it acts on it (serve)
		// Never blocks on an attempt that is over: nobody would take the
		// request, and the reader must go on to the end of the stream
		// (the process's shutdown waits for it).
		select {
		case d.requests <- &Wire{Msg: msg, Raw: append([]byte(nil), raw...)}:
		case <-d.a.Halt:
		case <-d.a.Ended:
		}
	}
}

// attemptFor names the attempt a message belongs to: the one whose request it
// answers, the cue it names, or the only attempt using the process.
func (ap *agentProcess) attemptFor(msg protocols.Message) *jsonlDriver {
	if cue := protocols.CueOf(msg); cue != "" {
		if a := ap.active[cue]; a != nil {
			return a
		}
	}
	if len(ap.active) == 1 {
		for _, a := range ap.active {
			return a
		}
	}
	return nil
}

// send records a message to the agent as attempt d's (nil: as none's)
// and writes it.
func (ap *agentProcess) send(d *jsonlDriver, msg protocols.Message) *attempt.Failure {
	raw, err := protocols.Encode(msg)
	if err != nil {
		return attempt.Failf("internal", "encoding %s: %v", msg.Type, err)
	}
	if d != nil {
		if f := d.a.Host.Record("out", &Wire{Msg: msg, Raw: raw}); f != nil {
			return f
		}
	}
	return ap.write(msg)
}

// write writes a message that is already recorded. An agent that has not
// read its stdin for the grace period is broken: orch never blocks on it.
func (ap *agentProcess) write(msg protocols.Message) *attempt.Failure {
	_ = ap.p.Stdin().SetWriteDeadline(time.Now().Add(ap.run.Grace))
	if err := ap.w.Send(msg); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			f := attempt.Failf("malfunction", "the agent has not read its stdin for %s (writing %s to it)", ap.run.Grace, msg.Type)
			ap.fail(f)
			return f
		}
		select {
		case <-ap.done:
			return ap.failure()
		case <-time.After(ap.run.Grace):
			f := attempt.Failf("malfunction", "cannot write %s to the agent: %v", msg.Type, err)
			ap.fail(f)
			return f
		}
	}
	return nil
}

func (ap *agentProcess) logLine(text string) {
	ap.mu.Lock()
	d := ap.last
	ap.mu.Unlock()
	if d != nil {
		d.a.Host.Log("stderr", text)
		return
	}
	ap.logs.Add(record.LogLine{RunID: ap.run.ID, Agent: ap.agent.ID, Stream: "stderr", At: time.Now().UTC(), Text: text})
}
