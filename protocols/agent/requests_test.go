package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/protocols/agent"
)

// answerUntilDone plays orch during a GO: it answers each request the agent
// makes with answer's body (nil: no answer), and returns the GO's outcome.
func (f *fakeOrch) answerUntilDone(goReq protocols.Message, answer func(m protocols.Message) protocols.Body) protocols.Message {
	f.t.Helper()
	for {
		m := f.recv()
		switch m.Type {
		case protocols.TypeTaskComplete, protocols.TypeTaskFailed:
			if err := protocols.CheckReply(goReq, m); err != nil {
				f.t.Fatal(err)
			}
			return m
		}
		if b := answer(m); b != nil {
			f.send(protocols.Reply(m, b))
		}
	}
}

// TestRequests: every request method, round trip through a fake orch.
func TestRequests(t *testing.T) {
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		out := map[string]any{}
		var err error
		check := func(e error) {
			if e != nil && err == nil {
				err = e
			}
		}
		v, e := t.BlackboardWrite(ctx, "plan", map[string]any{"steps": 3})
		out["version"] = v
		check(e)
		val, found, ver, author, e := t.BlackboardRead(ctx, "plan")
		out["read"] = []any{val, found, ver, author}
		check(e)
		out["answer"], e = t.Ask(ctx, "Which region?", "")
		check(e)
		res, e := t.Handoff(ctx, "tester", "T-1", map[string]any{"task_description": "test it"})
		out["handoff"] = res.Status + " " + res.Reason
		check(e)
		id, e := t.Spawn(ctx, "worker", map[string]any{"n": 1})
		check(e)
		select {
		case a := <-t.Announcements():
			out["announce"] = id + " " + a.TaskID + " " + a.Status
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		check(t.Send(ctx, "sibling", "hi"))
		if e := t.Send(ctx, "gone", "hi"); errors.Is(e, agent.ErrNotDelivered) {
			out["gone"] = e.Error()
		}
		check(t.MemoryWrite(ctx, "lesson", "retry the db", []string{"db"}))
		items, e := t.MemorySearch(ctx, "db")
		out["items"] = len(items)
		check(e)
		check(t.Status(ctx, "blocked", "waiting"))
		check(t.Usage(ctx, 2.5))
		check(t.Discovery(ctx, "a flaky test"))
		check(t.User(ctx, "FYI"))
		check(t.Escalate(ctx, "odd", nil))
		return out, err
	})

	var sent []string
	goReq := f.send(protocols.New(goMsg(nil)))
	done := f.answerUntilDone(goReq, func(m protocols.Message) protocols.Body {
		sent = append(sent, m.Type)
		switch b := m.Body.(type) {
		case protocols.BlackboardWrite:
			return protocols.BlackboardAck{Key: b.Key, Version: 4}
		case protocols.BlackboardRead:
			return protocols.BlackboardValue{Key: b.Key, Found: true, Value: "v", Version: 4, Author: "me"}
		case protocols.QuestionAsk:
			if b.Complexity != "quick" {
				t.Errorf("complexity %q", b.Complexity)
			}
			return protocols.QuestionAnswer{Answer: "eu-west"}
		case protocols.TaskHandoff:
			if b.FromAgent != "greeter" || b.HandoffContext["task_description"] != "test it" {
				t.Errorf("handoff %+v", b)
			}
			return protocols.HandoffResult{TaskID: b.TaskID, Status: "refused", Reason: "busy"}
		case protocols.TaskSpawn:
			// The announcement right behind the acceptance must still reach the spawner.
			f.send(protocols.Reply(m, protocols.SpawnAccepted{TaskID: "T-9"}))
			f.send(protocols.New(protocols.TaskAnnounce{TaskID: "T-9", Status: "completed"}))
			return nil
		case protocols.MessageSend:
			if b.To == "gone" {
				return protocols.DeliveryFailed{Reason: "gone has ended"}
			}
			return protocols.MessageSent{To: b.To}
		case protocols.MemoryWrite:
			return protocols.MemoryAck{Key: b.Key}
		case protocols.MemorySearch:
			return protocols.MemoryResults{Items: []map[string]any{{"key": "lesson"}}}
		}
		return nil // notifications: no answer
	})
	outputs := done.Body.(protocols.TaskComplete).Outputs
	want := map[string]any{
		"version":  4.0,
		"read":     []any{"v", true, 4.0, "me"},
		"answer":   "eu-west",
		"handoff":  "refused busy",
		"announce": "T-9 T-9 completed",
		"gone":     "message to gone not delivered: gone has ended",
		"items":    1.0,
	}
	for k, w := range want {
		if !equalJSON(outputs[k], w) {
			t.Errorf("%s = %#v, want %#v", k, outputs[k], w)
		}
	}
	wantSent := "blackboard.write blackboard.read question.ask task.handoff task.spawn message.send message.send " +
		"memory.write memory.search status.update status.usage discovery.report message.user escalation.error"
	if got := strings.Join(sent, " "); got != wantSent {
		t.Errorf("requests:\n got %s\nwant %s", got, wantSent)
	}
}

// equalJSON compares two values as JSON, so that 4 and 4.0 are equal.
func equalJSON(a, b any) bool {
	return fmtJSON(a) == fmtJSON(b)
}

func fmtJSON(v any) string {
	line, err := protocols.Encode(protocols.Message{ID: "x", Body: protocols.MessageUser{Body: v}})
	if err != nil {
		return err.Error()
	}
	return string(line)
}

func TestSendNotDelivered(t *testing.T) {
	errc := make(chan error, 1)
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		errc <- t.Send(ctx, "gone", "hi")
		return nil, nil
	})
	goReq := f.send(protocols.New(goMsg(nil)))
	f.answerUntilDone(goReq, func(m protocols.Message) protocols.Body {
		return protocols.DeliveryFailed{Reason: "gone has ended"}
	})
	err := <-errc
	if !errors.Is(err, agent.ErrNotDelivered) || err.Error() != "message to gone not delivered: gone has ended" {
		t.Errorf("got %v", err)
	}
}

func TestBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(m protocols.Message) protocols.Body
		want   string
	}{
		{"protocol error", func(protocols.Message) protocols.Body { return protocols.ProtocolError{Reason: "no such key"} },
			"orch refused blackboard.write: no such key"},
		{"wrong type", func(protocols.Message) protocols.Body { return protocols.MemoryAck{} },
			"orch answered wrongly: expected blackboard.ack or blackboard.conflict in reply to blackboard.write, got memory.ack"},
		{"wrong key", func(protocols.Message) protocols.Body { return protocols.BlackboardAck{Key: "other"} },
			`orch answered wrongly: blackboard.ack: reply for key "other"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
				_, err := t.BlackboardWrite(ctx, "k", 1)
				var oe *agent.OrchError
				if errors.As(err, &oe) != strings.HasPrefix(tc.want, "orch refused") {
					return nil, errors.New("OrchError expected exactly for protocol.error, got " + err.Error())
				}
				return nil, err
			})
			goReq := f.send(protocols.New(goMsg(nil)))
			done := f.answerUntilDone(goReq, tc.answer)
			if failed, ok := done.Body.(protocols.TaskFailed); !ok || !strings.HasPrefix(failed.Error, tc.want) {
				t.Errorf("got %+v", done.Body)
			}
		})
	}
}

// TestQuestionFromChild: a question from a child reaches the handler, which
// answers it; another one it passes up.
func TestQuestionFromChild(t *testing.T) {
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		q := <-t.Questions()
		if err := q.Answer(ctx, "yes: "+q.Question); err != nil {
			return nil, err
		}
		q = <-t.Questions()
		return nil, q.PassUp(ctx)
	})
	goReq := f.send(protocols.New(goMsg(nil)))
	ask1 := f.send(protocols.New(protocols.QuestionAsk{Question: "Deploy?", Complexity: "quick", QuestionID: "Q1"}))
	ans := f.recv()
	if err := protocols.CheckReply(ask1, ans); err != nil || ans.Body.(protocols.QuestionAnswer).Answer != "yes: Deploy?" {
		t.Fatalf("%v %+v", err, ans)
	}
	ask2 := f.send(protocols.New(protocols.QuestionAsk{Question: "Budget?", Complexity: "deep", QuestionID: "Q2"}))
	up := f.recv() // the parent's own question
	if b, ok := up.Body.(protocols.QuestionAsk); !ok || b.Question != "Budget?" || b.Complexity != "deep" {
		t.Fatalf("got %+v", up)
	}
	f.send(protocols.Reply(up, protocols.QuestionAnswer{Answer: "100"}))
	ans = f.recv()
	if err := protocols.CheckReply(ask2, ans); err != nil || ans.Body.(protocols.QuestionAnswer).Answer != "100" || ans.Body.(protocols.QuestionAnswer).QuestionID != "Q2" {
		t.Fatalf("%v %+v", err, ans)
	}
	if done := f.recv(); done.Type != protocols.TypeTaskComplete || done.InReplyTo != goReq.ID {
		t.Errorf("got %+v", done)
	}
}

// TestConcurrentRequests: requests from several goroutines each get their
// own answer, whatever the order orch answers in.
func TestConcurrentRequests(t *testing.T) {
	const n = 20
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				key := string(rune('a' + i))
				v, err := t.BlackboardWrite(ctx, key, i)
				if err == nil && v != int64(i) {
					err = errors.New(key + ": wrong version")
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	goReq := f.send(protocols.New(goMsg(nil)))
	var reqs []protocols.Message
	for range n {
		reqs = append(reqs, f.recv())
	}
	for i := len(reqs) - 1; i >= 0; i-- { // answer in reverse order
		b := reqs[i].Body.(protocols.BlackboardWrite)
		f.send(protocols.Reply(reqs[i], protocols.BlackboardAck{Key: b.Key, Version: int64(b.Key[0] - 'a')}))
	}
	if done := f.recv(); done.Type != protocols.TypeTaskComplete || done.InReplyTo != goReq.ID {
		t.Errorf("got %+v", done)
	}
}

// TestHubChannels: agents.list, broadcasts both ways, status.report (and
// the library's answer to status.request from it), notify.mode and an
// escalation with a severity, through a fake orch.
func TestHubChannels(t *testing.T) {
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		out := map[string]any{}
		list, err := t.ListAgents(ctx)
		if err != nil {
			return nil, err
		}
		out["agents"] = list[0].TaskID + " " + list[0].State
		if out["to"], err = t.Broadcast(ctx, "v2"); err != nil {
			return nil, err
		}
		select {
		case b := <-t.Broadcasts():
			out["heard"] = b.From + " " + b.Body.(string)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := t.ReportStatus(ctx, "blocked", 0.5, "db"); err != nil {
			return nil, err
		}
		if err := t.SetNotifyMode(ctx, "summary"); err != nil {
			return nil, err
		}
		select {
		case n := <-t.Notices():
			out["notice"] = n.Kind
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return out, t.EscalateWithSeverity(ctx, "high", "disk full", nil)
	})
	goReq := f.send(protocols.New(goMsg(nil)))
	var report protocols.StatusReport
	done := f.answerUntilDone(goReq, func(m protocols.Message) protocols.Body {
		switch b := m.Body.(type) {
		case protocols.AgentsList:
			return protocols.AgentsListed{Agents: []protocols.ListedAgent{{ID: "greeter", TaskID: "CUE-1", CueID: "CUE-1", State: "working"}}}
		case protocols.BroadcastSend:
			f.send(protocols.New(protocols.BroadcastNotice{CueID: "CUE-1", From: "other", Body: "v1"}))
			return protocols.BroadcastSent{Recipients: []string{"CUE-2"}}
		case protocols.StatusReport:
			if m.InReplyTo == "" { // unasked: now ask, the library answers from it
				f.send(protocols.New(protocols.StatusRequest{CueID: "CUE-1"}))
			} else {
				report = b
			}
		case protocols.NotifyMode:
			f.send(protocols.New(protocols.MessageNotice{CueID: "CUE-1", From: "kid", Kind: "summary"}))
			return protocols.NotifyAck{Mode: b.Mode}
		case protocols.EscalationError:
			if b.Severity != "high" {
				t.Errorf("severity %q", b.Severity)
			}
		}
		return nil
	})
	outputs := done.Body.(protocols.TaskComplete).Outputs
	want := map[string]any{"agents": "CUE-1 working", "to": []any{"CUE-2"}, "heard": "other v1", "notice": "summary"}
	for k, w := range want {
		if !equalJSON(outputs[k], w) {
			t.Errorf("%s = %#v, want %#v", k, outputs[k], w)
		}
	}
	if report.State != "blocked" || report.Progress != 0.5 || report.Detail != "db" {
		t.Errorf("the answer to status.request: %+v", report)
	}
}

// TestLoopBlocked: the loop guard's refusal is told apart from others.
func TestLoopBlocked(t *testing.T) {
	blocked := &agent.OrchError{Request: "blackboard.read", Reason: "loop_blocked: you sent the same blackboard.read 20 times; try a different approach"}
	if !agent.LoopBlocked(blocked) || !agent.LoopBlocked(fmt.Errorf("step 3: %w", blocked)) {
		t.Error("a loop_blocked refusal is not LoopBlocked")
	}
	if agent.LoopBlocked(&agent.OrchError{Request: "blackboard.read", Reason: "no such key"}) || agent.LoopBlocked(errors.New("loop_blocked: not orch's")) {
		t.Error("another error is LoopBlocked")
	}
}

// SendPrivate sends private: true; a routed notice reaches Notices.
func TestSendPrivateAndNotices(t *testing.T) {
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		if err := t.SendPrivate(ctx, "C-2/1", "secret plan"); err != nil {
			return nil, err
		}
		select {
		case n := <-t.Notices():
			return map[string]any{"notice": n.From + " " + n.FromTask + " -> " + n.ToTask, "routed": n.Routed, "private": n.Private, "body": n.Body}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	goReq := f.send(protocols.New(goMsg(nil)))
	done := f.answerUntilDone(goReq, func(m protocols.Message) protocols.Body {
		b, ok := m.Body.(protocols.MessageSend)
		if !ok || !b.Private || b.To != "C-2/1" || b.Body != "secret plan" {
			t.Errorf("sent %+v", m)
		}
		f.send(protocols.New(protocols.MessageNotice{CueID: "CUE-1", From: "dev", To: "qa", Kind: "message.send",
			FromTask: "CUE-1/1", ToTask: "CUE-1/2", Routed: true, Private: true}))
		return protocols.MessageSent{To: b.To}
	})
	out := done.Body.(protocols.TaskComplete).Outputs
	if out["notice"] != "dev CUE-1/1 -> CUE-1/2" || out["routed"] != true || out["private"] != true || out["body"] != nil {
		t.Errorf("got %v", out)
	}
}
