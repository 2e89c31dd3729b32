//go:build unix

package runner

import (
	"context"
	"testing"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/record"
)

// A typed request (an MCP tool's, issue 29) is served by the hub as the
// jsonl message with the same body: the agent sees the board written by a
// call, a call's question reaches the person and its answer comes back, the
// tool policy refuses a handoff the agent may not make, and each request and
// answer is recorded as the attempt's message.
func TestCallServesTypedRequests(t *testing.T) {
	// The agent polls the board for done meanwhile, as often as it likes.
	o := collab(t, callCuelist, scriptAgent(t, "lead", ""), scriptAgent(t, "helper", ""))
	type replies struct {
		write, read, ask, handoff, report protocols.Message
		err                               error
	}
	got := make(chan replies, 1)
	testHookGoing = func(a *attemptRun) {
		if a.Cue.ID != "C" {
			return
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var r replies
			call := func(m *protocols.Message, body protocols.Body) {
				if r.err == nil {
					*m, r.err = a.Call(ctx, body)
				}
			}
			call(&r.write, protocols.BlackboardWrite{Key: "k", Value: 7})
			call(&r.read, protocols.BlackboardRead{Key: "k"})
			call(&r.ask, protocols.QuestionAsk{Question: "ship it?", Complexity: "quick"})
			call(&r.handoff, protocols.TaskHandoff{ToAgent: "nobody", TaskID: "T"})
			call(&r.report, protocols.StatusReport{State: "working"})
			var done protocols.Message
			call(&done, protocols.BlackboardWrite{Key: "done", Value: true})
			got <- r
		}()
	}
	t.Cleanup(func() { testHookGoing = nil })
	rec := newMemRecorder()
	var asked []QuestionPrompt
	res := runCollab(t, o, rec, func(o *Options) {
		o.Ask = func(_ context.Context, q QuestionPrompt) (string, bool) {
			asked = append(asked, q)
			return "yes", true
		}
	})
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s (%s)", res.State, res.Reason, reasonOf(rec, "C"))
	}
	var r replies
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the calls did not end")
	}
	if r.err != nil {
		t.Fatalf("call: %v", r.err)
	}
	if ack, ok := r.write.Body.(protocols.BlackboardAck); !ok || ack.Key != "k" || ack.Version != 1 {
		t.Errorf("blackboard.write answered %+v", r.write)
	}
	if v, ok := r.read.Body.(protocols.BlackboardValue); !ok || !v.Found || v.Value != float64(7) || v.Author != "lead" {
		t.Errorf("blackboard.read answered %+v", r.read)
	}
	if a, ok := r.ask.Body.(protocols.QuestionAnswer); !ok || a.Answer != "yes" || len(asked) != 1 || asked[0].Question != "ship it?" || asked[0].Agent != "lead" {
		t.Errorf("question.ask answered %+v (asked %+v)", r.ask, asked)
	}
	if h, ok := r.handoff.Body.(protocols.HandoffResult); !ok || h.Status != "refused" {
		t.Errorf("task.handoff answered %+v", r.handoff)
	}
	if r.report.Type != "" {
		t.Errorf("status.report answered %+v", r.report)
	}
	if got := outputsOf(t, rec, "C")["read_k"]; got != float64(7) {
		t.Errorf("the agent read k = %v, want the call's 7", got)
	}
	// Each request is the attempt's message "in", each answer "out", as a
	// jsonl agent's (a blackboard.write is recorded by its board event).
	seen := recordedMessages(rec, "lead", "C")
	for _, want := range []string{"in blackboard.read", "out blackboard.value", "in question.ask", "out question.answer",
		"in task.handoff", "out handoff.result", "in status.report"} {
		if !seen[want] {
			t.Errorf("no %s recorded (recorded: %v)", want, seen)
		}
	}
}

// callCuelist is a run whose cue C's agent (lead) waits for the key done,
// then reads k: the typed requests made meanwhile are its attempt's.
const callCuelist = `  guardrails: {loop_warn: 1000000, loop_block: 1000000}
  cues:
    - id: C
      agents: [lead]
      inputs:
        script:
          - await_key: done
          - bb_read: k
    - {id: D, agents: [helper], inputs: {script: [{output: {ok: true}}]}}
`

// recordedMessages are the directions and types of an attempt's recorded
// messages ("in blackboard.read").
func recordedMessages(rec *memRecorder, agent, cue string) map[string]bool {
	seen := map[string]bool{}
	for _, e := range rec.of(record.EvMessage) {
		var d record.MessageData
		asData(e.Data, &d)
		if e.Agent == agent && e.Cue == cue {
			seen[d.Direction+" "+d.Type] = true
		}
	}
	return seen
}
