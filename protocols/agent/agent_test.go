// The agent is tested from the outside, as an agent author uses it, against
// an in-process fake orch speaking over pipes.
package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/protocols/agent"
)

// fakeOrch is the orch side of an agent served in-process over pipes.
type fakeOrch struct {
	t    *testing.T
	in   *io.PipeWriter // the agent's stdin
	w    *protocols.Writer
	msgs chan protocols.Message // what the agent wrote to stdout
	done chan error             // agent.Serve's result
	log  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const wait = 5 * time.Second

func serve(t *testing.T, h agent.Handler, opts ...agent.Option) *fakeOrch {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	f := &fakeOrch{t: t, in: inW, w: protocols.NewWriter(inW), msgs: make(chan protocols.Message, 100),
		done: make(chan error, 1), log: &syncBuffer{}}
	opts = append([]agent.Option{agent.WithLog(f.log), agent.WithStopGrace(time.Second)}, opts...)
	go func() {
		err := agent.Serve(context.Background(), inR, outW, h, opts...)
		outW.Close()
		f.done <- err
	}()
	// The reader records problems instead of failing the test itself: it may
	// still run while the test ends.
	var problems []string
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(f.msgs)
		r := protocols.NewReader(outR, 0)
		for {
			m, raw, err := r.Next()
			var de *protocols.DecodeError
			switch {
			case errors.As(err, &de):
				problems = append(problems, fmt.Sprintf("the agent wrote %q: %v", raw, err))
				continue
			case err != nil:
				return
			case !protocols.FromAgent(m.Type):
				problems = append(problems, fmt.Sprintf("the agent sent %s, which only orch sends", m.Type))
			}
			f.msgs <- m
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		<-readerDone
		for _, p := range problems {
			t.Error(p)
		}
		if t.Failed() {
			t.Logf("agent log:\n%s", f.log)
		}
	})
	return f
}

func (f *fakeOrch) send(m protocols.Message) protocols.Message {
	f.t.Helper()
	if err := f.w.Send(m); err != nil {
		f.t.Fatalf("send %s: %v", m.Type, err)
	}
	return m
}

func (f *fakeOrch) recv() protocols.Message {
	f.t.Helper()
	select {
	case m, ok := <-f.msgs:
		if !ok {
			f.t.Fatal("the agent closed stdout")
		}
		return m
	case <-time.After(wait):
		f.t.Fatal("no message from the agent")
	}
	return protocols.Message{}
}

// exchange sends a request and returns the agent's checked answer.
func (f *fakeOrch) exchange(body protocols.Body) protocols.Message {
	f.t.Helper()
	req := f.send(protocols.New(body))
	reply := f.recv()
	if err := protocols.CheckReply(req, reply); err != nil {
		f.t.Fatalf("%v (%+v)", err, reply)
	}
	return reply
}

func (f *fakeOrch) end() error {
	f.t.Helper()
	select {
	case err := <-f.done:
		return err
	case <-time.After(wait):
		f.t.Fatal("Serve did not return")
	}
	return nil
}

func goMsg(inputs map[string]any) protocols.CoordGo {
	return protocols.CoordGo{RunID: "r1", CueID: "CUE-1", Task: protocols.Task{
		RunID: "r1", CueID: "CUE-1", AgentID: "greeter", Attempt: 1, Inputs: inputs}}
}

func TestHappyPath(t *testing.T) {
	var phases []string
	hook := func(name string) agent.Hook {
		return func(ctx context.Context, t *agent.Task) error {
			phases = append(phases, name+" "+t.CueID)
			return nil
		}
	}
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		t.Logf("working on %s", t.CueID)
		return map[string]any{"greeting": "hello " + t.Input("name")}, nil
	}, agent.OnWarning(hook("warning")), agent.OnStandby(hook("standby")))

	f.exchange(protocols.CoordWarning{RunID: "r1", CueID: "CUE-1", Attempt: 1})
	f.exchange(protocols.CoordStandby{RunID: "r1", CueID: "CUE-1"})
	reply := f.exchange(goMsg(map[string]any{"name": "Ada"}))
	done, ok := reply.Body.(protocols.TaskComplete)
	if !ok || done.CueID != "CUE-1" || done.Outputs["greeting"] != "hello Ada" {
		t.Errorf("got %+v", reply)
	}
	f.in.Close()
	if err := f.end(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if strings.Join(phases, ",") != "warning CUE-1,standby CUE-1" {
		t.Errorf("hooks ran: %v", phases)
	}
	if !strings.Contains(f.log.String(), "greeter CUE-1: working on CUE-1\n") {
		t.Errorf("log: %q", f.log)
	}
}

func TestHandlerFailure(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		panics    bool
		want      string
		retriable bool
	}{
		{"plain error", errors.New("disk full"), false, "disk full", false},
		{"Retriable", agent.Retriable(errors.New("db busy")), false, "db busy", true},
		{"wrapped ErrRetriable", fmt.Errorf("db busy: %w", agent.ErrRetriable), false, "db busy: retriable", true},
		{"empty error", errors.New(""), false, "failed", false},
		{"panic", nil, true, "panic: boom", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
				if tc.panics {
					panic("boom")
				}
				return nil, tc.err
			})
			reply := f.exchange(goMsg(nil))
			failed, ok := reply.Body.(protocols.TaskFailed)
			if !ok || failed.Error != tc.want || failed.Retriable != tc.retriable || failed.CueID != "CUE-1" {
				t.Errorf("got %+v", reply.Body)
			}
		})
	}
}

func TestOutputsThatCannotBeSent(t *testing.T) {
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		return map[string]any{"f": func() {}}, nil
	})
	reply := f.exchange(goMsg(nil))
	if failed, ok := reply.Body.(protocols.TaskFailed); !ok || !strings.Contains(failed.Error, "cannot send the outputs") {
		t.Errorf("got %+v", reply.Body)
	}
}

func TestStopCancels(t *testing.T) {
	started := make(chan struct{})
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	req := f.send(protocols.New(goMsg(nil)))
	<-started
	f.send(protocols.New(protocols.CoordStop{Reason: "run stopped"}))
	reply := f.recv()
	if err := protocols.CheckReply(req, reply); err != nil {
		t.Fatal(err)
	}
	if failed := reply.Body.(protocols.TaskFailed); failed.Error != "stopped by orch: run stopped" || failed.Retriable {
		t.Errorf("got %+v", failed)
	}
	if err := f.end(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestStopOneCue: one process serves several cues; a coord.stop naming one
// of them cancels that cue's handler only, and the other goes on to complete
// (a stop of a sibling cue once failed every cue the process served).
func TestStopOneCue(t *testing.T) {
	started := make(chan string, 2)
	release := make(chan struct{})
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		started <- t.CueID
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-release:
			return map[string]any{"done": t.CueID}, nil
		}
	})
	a, b := goMsg(nil), goMsg(nil)
	b.CueID, b.Task.CueID = "CUE-2", "CUE-2"
	reqA := f.send(protocols.New(a))
	reqB := f.send(protocols.New(b))
	<-started
	<-started
	f.send(protocols.New(protocols.CoordStop{RunID: "r1", CueID: "CUE-2", Reason: "cue CUE-2 was stopped"}))
	reply := f.recv()
	if err := protocols.CheckReply(reqB, reply); err != nil {
		t.Fatalf("the first reply is not CUE-2's: %v (%+v)", err, reply.Body)
	}
	if failed, ok := reply.Body.(protocols.TaskFailed); !ok || failed.Error != "stopped by orch: cue CUE-2 was stopped" {
		t.Fatalf("CUE-2: got %+v", reply.Body)
	}
	close(release)
	reply = f.recv()
	if err := protocols.CheckReply(reqA, reply); err != nil {
		t.Fatal(err)
	}
	if done, ok := reply.Body.(protocols.TaskComplete); !ok || done.Outputs["done"] != "CUE-1" {
		t.Fatalf("CUE-1 did not complete: %+v", reply.Body)
	}
	f.in.Close() // the process served on after the cue's stop: it ends at EOF
	if err := f.end(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestStopThenEOF: coord.stop as the last line before stdin closes still
// cancels the handlers (rather than waiting for them as at a plain EOF).
func TestStopThenEOF(t *testing.T) {
	in := strings.NewReader(`{"message_type":"coord.go","id":"g1","cue_id":"C"}` + "\n" +
		`{"message_type":"coord.stop","id":"s1","reason":"bye"}` + "\n")
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- agent.Serve(context.Background(), in, &out, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, agent.WithLog(io.Discard))
	}()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), `"error":"stopped by orch: bye"`) {
			t.Errorf("Serve: %v; output %s", err, out.String())
		}
	case <-time.After(wait):
		t.Fatal("Serve did not return")
	}
}

func TestEOF(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		f := serve(t, nil)
		f.in.Close()
		if err := f.end(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	t.Run("running work finishes", func(t *testing.T) {
		release := make(chan struct{})
		f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
			<-release
			return map[string]any{"ok": true}, ctx.Err()
		})
		f.send(protocols.New(goMsg(nil)))
		f.in.Close()
		close(release)
		if m := f.recv(); m.Type != protocols.TypeTaskComplete {
			t.Errorf("got %+v", m)
		}
		if err := f.end(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	t.Run("waiting request fails", func(t *testing.T) {
		f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
			_, err := t.BlackboardWrite(ctx, "k", 1)
			return nil, err
		})
		f.send(protocols.New(goMsg(nil)))
		if m := f.recv(); m.Type != protocols.TypeBlackboardWrite {
			t.Fatalf("got %+v", m)
		}
		f.in.Close()
		if m := f.recv(); m.Type != protocols.TypeTaskFailed || !strings.Contains(m.Body.(protocols.TaskFailed).Error, agent.ErrClosed.Error()) {
			t.Errorf("got %+v", m)
		}
		f.end()
	})
}

func TestHookError(t *testing.T) {
	f := serve(t, nil, agent.OnWarning(func(ctx context.Context, t *agent.Task) error {
		return errors.New("no toolchain")
	}))
	f.send(protocols.New(protocols.CoordWarning{CueID: "CUE-1"}))
	m := f.recv()
	if e, ok := m.Body.(protocols.EscalationError); !ok || e.Error != "warning hook for cue CUE-1: no toolchain" {
		t.Errorf("got %+v", m)
	}
	if err := f.end(); err == nil || !strings.Contains(err.Error(), "no toolchain") {
		t.Errorf("Serve: %v", err)
	}
}

func TestInput(t *testing.T) {
	task := &agent.Task{Task: protocols.Task{
		Inputs:         map[string]any{"s": "text", "n": 42.0, "f": 1.5, "b": true, "o": map[string]any{"a": 1.0}, "null": nil},
		HandoffContext: map[string]any{"h": "from the parent", "s": "shadowed"},
	}}
	for key, want := range map[string]string{"s": "text", "n": "42", "f": "1.5", "b": "true", "o": `{"a":1}`, "null": "", "h": "from the parent", "missing": ""} {
		if got := task.Input(key); got != want {
			t.Errorf("Input(%q) = %q, want %q", key, got, want)
		}
	}
}

// A fan-out's task carries its item; ItemInto decodes it, and says when a
// task has none.
func TestItemInto(t *testing.T) {
	task := &agent.Task{Task: protocols.Task{Item: []byte(`{"id":"db","title":"Database"}`)}}
	var item struct{ ID, Title string }
	if ok, err := task.ItemInto(&item); !ok || err != nil || item.ID != "db" || item.Title != "Database" {
		t.Errorf("ItemInto = %v, %v: %+v", ok, err, item)
	}
	if ok, err := (&agent.Task{}).ItemInto(&item); ok || err != nil {
		t.Errorf("ItemInto of a task without an item = %v, %v", ok, err)
	}
}

// An agent is a handler; Run does the protocol on stdin and stdout.
func ExampleRun() {
	agent.Run(func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		t.Logf("working on %s", t.CueID)
		return map[string]any{"greeting": "hello " + t.Input("name")}, nil
	}, agent.OnWarning(func(ctx context.Context, t *agent.Task) error {
		t.Logf("preparing for %s", t.CueID) // e.g. check the toolchain
		return nil
	}))
}

// Serve runs an agent on any reader and writer; here, three lines from orch.
func ExampleServe() {
	in := strings.NewReader(`{"message_type":"coord.warning","id":"w1","cue_id":"CUE-1"}
{"message_type":"coord.standby","id":"s1","cue_id":"CUE-1"}
{"message_type":"coord.go","id":"g1","cue_id":"CUE-1","task":{"cue_id":"CUE-1","inputs":{"name":"Ada"}}}
`)
	var out bytes.Buffer
	err := agent.Serve(context.Background(), in, &out, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		return map[string]any{"greeting": "hello " + t.Input("name")}, nil
	}, agent.WithLog(io.Discard))
	if err != nil {
		fmt.Println(err)
	}
	r := protocols.NewReader(&out, 0)
	for {
		m, _, err := r.Next()
		if err != nil {
			break
		}
		fmt.Printf("%s in reply to %s: %+v\n", m.Type, m.InReplyTo, m.Body)
	}
	// Output:
	// ack.warning in reply to w1: {CueID:CUE-1}
	// ack.standby in reply to s1: {CueID:CUE-1}
	// task.complete in reply to g1: {CueID:CUE-1 Outputs:map[greeting:hello Ada]}
}

// The hooks see what orch said with WARNING and STANDBY: the cue's group,
// when GO is expected, what to prepare, what to confirm.
func TestHooksSeeCoordFields(t *testing.T) {
	var got []string
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) { return nil, nil },
		agent.OnWarning(func(ctx context.Context, t *agent.Task) error {
			w := t.Warning
			got = append(got, fmt.Sprintf("warning %s %s %v", w.CueGroup, w.EstimatedGoTime, w.PreparationRequired))
			return nil
		}),
		agent.OnStandby(func(ctx context.Context, t *agent.Task) error {
			got = append(got, fmt.Sprintf("standby %v", t.Standby.ReadyCheck))
			return nil
		}))
	f.exchange(protocols.CoordWarning{RunID: "r1", CueID: "CUE-1", CueGroup: "deploy", EstimatedGoTime: "2026-01-20T14:00:00Z",
		PreparationRequired: []string{"check the slots"}, Attempt: 1})
	f.exchange(protocols.CoordStandby{RunID: "r1", CueID: "CUE-1", ReadyCheck: []string{"slots free?"}})
	f.in.Close()
	if err := f.end(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if strings.Join(got, "; ") != "warning deploy 2026-01-20T14:00:00Z [check the slots]; standby [slots free?]" {
		t.Errorf("hooks saw %q", got)
	}
}

// A child task's GO task says where it stands in the run's tree, and its
// inputs (inherited, its handoff_context on top) are what Input reads.
func TestChildTaskFields(t *testing.T) {
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		return map[string]any{"where": fmt.Sprintf("%s under %s at %d: %s", t.TaskID, t.ParentTaskID, t.Depth, t.Input("topic"))}, nil
	})
	g := goMsg(map[string]any{"topic": "dogs", "base": 1.0})
	g.Task.TaskID, g.Task.ParentTaskID, g.Task.Depth = "CUE-1/2", "CUE-1", 1
	g.Task.HandoffContext = map[string]any{"topic": "dogs"}
	reply := f.exchange(g)
	done, ok := reply.Body.(protocols.TaskComplete)
	if !ok || done.Outputs["where"] != "CUE-1/2 under CUE-1 at 1: dogs" {
		t.Errorf("got %+v", reply)
	}
	f.in.Close()
	_ = f.end()
}
