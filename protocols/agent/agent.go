// Package agent is a small library for writing `protocol: jsonl` agents for
// orch in Go. It speaks the cue protocol on stdin and stdout, so that an agent
// is only its work:
//
//	func main() {
//		agent.Run(func(ctx context.Context, t *agent.Task) (map[string]any, error) {
//			t.Logf("working on %s", t.CueID) // to stderr, orch's log of the agent
//			return map[string]any{"greeting": "hello " + t.Input("name")}, nil
//		})
//	}
//
// Run answers coord.warning with ack.warning and coord.standby with
// ack.standby (after the optional OnWarning and OnStandby hooks), calls the
// handler at coord.go, and answers with task.complete and the handler's
// outputs, or task.failed and its error (retriable if the error wraps
// ErrRetriable: return agent.Retriable(err)). It returns when orch closes
// stdin, once the running handlers are done, or when a coord.stop for the
// whole run arrives, after cancelling the handlers' contexts. A coord.stop
// that names a cue cancels that cue's handler only: one process serves
// several cues, and the others go on.
//
// While it works, a handler may call on orch through its *Task: the run's
// blackboard (BlackboardWrite, BlackboardRead), questions (Ask), handoffs and
// spawned children (Handoff, Spawn), messages (Send, User), memory
// (MemoryWrite, MemorySearch) and reports (Status, Usage, Discovery,
// Escalate). Each request waits for its own answer, matched by in_reply_to,
// so a handler may make requests from several goroutines at once. What orch
// sends unasked arrives on channels: Announcements (a spawned child ended),
// Messages (from a sibling) and Questions (from a child, to answer or pass up).
//
// Everything the agent prints to stdout must be a protocol message: log with
// Task.Logf, which writes to stderr.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/orch-cli/orch/protocols"
)

// Handler does the work of one GO: it returns the outputs (the keys the
// agent's contract provides) or an error. ctx is cancelled when orch stops
// the run.
type Handler func(ctx context.Context, t *Task) (map[string]any, error)

// Hook runs at WARNING or STANDBY, before the acknowledgement. The Task has
// the run, cue and attempt only; inputs come with GO. An error from a hook
// is reported to orch as escalation.error and ends the agent (Run exits 1):
// an agent that cannot prepare should fail fast rather than be timed out.
type Hook func(ctx context.Context, t *Task) error

var (
	// ErrRetriable marks an error after which orch may retry the attempt
	// (task.failed with retriable: true). Wrap it, or use Retriable.
	ErrRetriable = errors.New("retriable")
	// ErrStopped is the cause of a handler's context cancellation when orch
	// sends coord.stop.
	ErrStopped = errors.New("stopped by orch")
	// ErrClosed is returned by requests still waiting when orch closes stdin.
	ErrClosed = errors.New("orch closed the connection")
	// ErrNotDelivered is wrapped by Send's error when orch answers delivery.failed.
	ErrNotDelivered = errors.New("not delivered")
)

// Retriable returns err marked as retriable: its text is err's, and
// errors.Is(result, ErrRetriable) holds. Retriable(nil) is nil.
func Retriable(err error) error {
	if err == nil {
		return nil
	}
	return retriable{err}
}

type retriable struct{ error }

func (r retriable) Unwrap() []error { return []error{r.error, ErrRetriable} }

// Option configures Run and Serve.
type Option func(*config)

type config struct {
	onWarning, onStandby Hook
	log                  io.Writer
	stopGrace            time.Duration
}

// OnWarning sets a hook run at coord.warning, before ack.warning.
func OnWarning(h Hook) Option { return func(c *config) { c.onWarning = h } }

// OnStandby sets a hook run at coord.standby, before ack.standby.
func OnStandby(h Hook) Option { return func(c *config) { c.onStandby = h } }

// WithLog sets where Logf and the library's own notes go (default os.Stderr).
func WithLog(w io.Writer) Option { return func(c *config) { c.log = w } }

// WithStopGrace sets how long, after coord.stop, to wait for handlers to
// return before giving up on them (default 5s; orch kills the agent later).
func WithStopGrace(d time.Duration) Option { return func(c *config) { c.stopGrace = d } }

// Run serves the cue protocol on stdin and stdout until orch closes stdin or
// stops the run, then returns. SIGTERM and SIGINT count as a stop. If the
// protocol cannot go on (stdout is broken, a hook failed) it prints the reason
// to stderr and exits with status 1.
func Run(h Handler, opts ...Option) {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	if err := Serve(ctx, os.Stdin, os.Stdout, h, opts...); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "agent: %v\n", err)
		os.Exit(1)
	}
}

// Serve is Run on any reader and writer, for tests and for agents that talk
// to orch some other way. It returns nil when in ends or coord.stop arrives,
// ctx's error when ctx ends first, and the reason when the protocol cannot go
// on.
func Serve(ctx context.Context, in io.Reader, out io.Writer, h Handler, opts ...Option) error {
	cfg := config{log: os.Stderr, stopGrace: 5 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s := &server{
		cfg: cfg, handler: h, ctx: ctx,
		w:         protocols.NewWriter(out),
		pending:   map[string]*pending{},
		spawned:   map[string]*Task{},
		cancels:   map[*Task]context.CancelCauseFunc{},
		inputDone: make(chan struct{}),
		stopped:   make(chan string, 1),
		fatal:     make(chan error, 1),
	}
	readDone := make(chan error, 1)
	go func() { readDone <- s.readLoop(in) }()

	select {
	case err := <-readDone:
		if err != nil {
			s.logf("reading stdin: %v", err)
		}
		select {
		case reason := <-s.stopped: // coord.stop was the last line
			cancel(fmt.Errorf("%w: %s", ErrStopped, reason))
			s.waitGrace()
			return nil
		default:
		}
		// Orch closed stdin: no more requests will be answered, but the work
		// already started may finish and report (a GO piped in by hand, too).
		s.work.Wait()
		select {
		case err := <-s.fatal:
			return err
		default:
			return nil
		}
	case reason := <-s.stopped:
		cancel(fmt.Errorf("%w: %s", ErrStopped, reason))
		s.waitGrace()
		return nil
	case err := <-s.fatal:
		cancel(err)
		s.waitGrace()
		return err
	case <-ctx.Done():
		s.waitGrace()
		return ctx.Err()
	}
}

// server is the state of one Serve call.
type server struct {
	cfg     config
	handler Handler
	ctx     context.Context // cancelled on stop; the parent of every handler's context
	w       *protocols.Writer
	logMu   sync.Mutex

	mu        sync.Mutex
	pending   map[string]*pending               // requests waiting for an answer, by message id
	running   []*Task                           // tasks at GO, oldest first
	cancels   map[*Task]context.CancelCauseFunc // each running task's handler context
	spawned   map[string]*Task                  // spawned child task id -> the task that spawned it
	inputDone chan struct{}                     // closed when stdin ends
	stopped   chan string                       // coord.stop's reason
	fatal     chan error                        // the first reason the protocol cannot go on
	work      sync.WaitGroup                    // running hooks and handlers
}

// pending is a request waiting for its answer.
type pending struct {
	task  *Task
	reply chan protocols.Message
}

func (s *server) readLoop(in io.Reader) error {
	defer close(s.inputDone)
	r := protocols.NewReader(in, protocols.DefaultMaxLine)
	for {
		m, _, err := r.Next()
		var de *protocols.DecodeError
		switch {
		case err == io.EOF:
			return nil
		case errors.As(err, &de):
			s.logf("ignoring a line from orch that is not a message: %v", err)
			continue
		case err != nil:
			return err
		}
		s.dispatch(m)
	}
}

// dispatch acts on one message from orch. It never blocks for long: hooks and
// handlers run in their own goroutines, so coord.stop and answers to requests
// are always read.
func (s *server) dispatch(m protocols.Message) {
	switch b := m.Body.(type) {
	case protocols.CoordWarning:
		t := s.newTask(protocols.Task{RunID: b.RunID, CueID: b.CueID, Attempt: b.Attempt})
		t.Warning = &b
		s.acknowledge(m, t, "warning", s.cfg.onWarning, protocols.AckWarning{CueID: b.CueID})
	case protocols.CoordStandby:
		t := s.newTask(protocols.Task{RunID: b.RunID, CueID: b.CueID})
		t.Standby = &b
		s.acknowledge(m, t, "standby", s.cfg.onStandby, protocols.AckStandby{CueID: b.CueID})
	case protocols.CoordGo:
		s.start(m, b)
	case protocols.CoordStop:
		if b.CueID != "" { // one cue stops; the process serves the others
			s.stopCue(b.CueID, b.Reason)
			return
		}
		select {
		case s.stopped <- b.Reason:
		default: // already stopping
		}
	default:
		if m.InReplyTo != "" && m.Type != protocols.TypeGuardWarning && s.deliver(m) {
			return
		}
		s.unsolicited(m)
	}
}

// acknowledge runs a phase's hook, then sends the acknowledgement. Without a
// hook the answer goes at once, from the reader goroutine, so that answers
// leave in the order of the requests; a hook runs on its own goroutine, so
// that a long preparation does not keep coord.stop from being read.
func (s *server) acknowledge(m protocols.Message, t *Task, phase string, hook Hook, ack protocols.Body) {
	if hook == nil {
		_ = s.send(protocols.Reply(m, ack))
		return
	}
	s.work.Add(1)
	go func() {
		defer s.work.Done()
		if err := s.protect(func() error { return hook(s.ctx, t) }); err != nil {
			err = fmt.Errorf("%s hook for cue %s: %w", phase, t.CueID, err)
			s.logf("%v", err)
			_ = s.send(protocols.New(protocols.EscalationError{Error: err.Error()}))
			s.fail(err)
			return
		}
		_ = s.send(protocols.Reply(m, ack))
	}()
}

// start runs the handler for a GO and answers with its outcome.
func (s *server) start(m protocols.Message, b protocols.CoordGo) {
	task := b.Task
	if task.CueID == "" {
		task.CueID = b.CueID
	}
	if task.RunID == "" {
		task.RunID = b.RunID
	}
	t := s.newTask(task)
	ctx, cancel := context.WithCancelCause(s.ctx)
	s.mu.Lock()
	s.running = append(s.running, t)
	s.cancels[t] = cancel
	s.mu.Unlock()
	s.work.Add(1)
	go func() {
		defer s.work.Done()
		defer cancel(nil)
		defer s.finish(t)
		var outputs map[string]any
		err := s.protect(func() (err error) { outputs, err = s.handler(ctx, t); return err })
		var reply protocols.Body = protocols.TaskComplete{CueID: t.CueID, Outputs: outputs}
		if err == nil {
			if _, encErr := protocols.Encode(protocols.New(reply)); encErr != nil {
				err = fmt.Errorf("cannot send the outputs: %w", encErr) // e.g. a NaN or a func in them
			}
		}
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, context.Canceled) {
				err = context.Cause(ctx) // say "stopped by orch: ...", not "context canceled"
			}
			msg := err.Error()
			if msg == "" {
				msg = "failed"
			}
			reply = protocols.TaskFailed{CueID: t.CueID, Error: msg, Retriable: errors.Is(err, ErrRetriable)}
		}
		_ = s.send(protocols.Reply(m, reply))
	}()
}

// finish forgets a task whose handler returned.
// stopCue cancels the handler of the cue's task at GO, if there is one
// (a stop during WARNING or STANDBY finds none: nothing is working yet).
func (s *server) stopCue(cue, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.running {
		if t.CueID == cue {
			s.cancels[t](fmt.Errorf("%w: %s", ErrStopped, reason))
		}
	}
}

func (s *server) finish(t *Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cancels, t)
	for i, r := range s.running {
		if r == t {
			s.running = append(s.running[:i], s.running[i+1:]...)
			break
		}
	}
	for id, owner := range s.spawned {
		if owner == t {
			delete(s.spawned, id)
		}
	}
}

// protect calls f, turning a panic into an error (with the stack in the log),
// so that a bug in a handler fails the attempt instead of killing the agent
// without a word to orch.
func (s *server) protect(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.logf("panic: %v\n%s", p, debug.Stack())
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// send writes m. A message that cannot be encoded is the caller's mistake and
// only returns an error; a failed write means orch is gone, which is fatal.
func (s *server) send(m protocols.Message) error {
	if _, err := protocols.Encode(m); err != nil {
		return err
	}
	if err := s.w.Send(m); err != nil {
		s.fail(fmt.Errorf("writing to orch: %w", err))
		return err
	}
	return nil
}

func (s *server) fail(err error) {
	select {
	case s.fatal <- err:
	default:
	}
}

// waitGrace waits for hooks and handlers, at most the stop grace.
func (s *server) waitGrace() {
	done := make(chan struct{})
	go func() { s.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.cfg.stopGrace):
		s.logf("handlers still running %v after the stop; leaving them", s.cfg.stopGrace)
	}
}

func (s *server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.log, "agent: "+format+"\n", args...)
}
