package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/record"
)

// A jsonl agent runs on a worker, through WARNING, STANDBY and GO (the
// example of the cue protocol on stdio).
func TestJSONLAgentOnWorker(t *testing.T) {
	root, path := repoRoot(t), "examples/protocol/cuelist.yaml"
	evs := completed(t, runEnv(t, root), RunInput{RunID: testRunID("r-jsonl"), Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"greeting_name": "Grace"}})
	if out := outputsOf(t, evs, "ECHO-100"); out["greeting_name"] != "Grace" {
		t.Fatalf("outputs %v, want greeting_name Grace\n%s", out, story(evs))
	}
}

// fakeLink is the workflow as a worker's attempt reaches it, in memory: the
// blackboard with the store's conflict rule, every question answered at
// once; writes are also set on the workflow's board (orch.bb-set), so that
// a cue's conditions see them.
type fakeLink struct {
	env     *testsuite.TestWorkflowEnvironment
	mu      sync.Mutex
	board   map[string]BBValue
	asked   []Ask
	answer  string // to every question ("": navy)
	sent    []Send
	signals []any
	inbox   sync.Map // agent -> chan Received
}

func (l *fakeLink) inboxOf(agent string) chan Received {
	ch, _ := l.inbox.LoadOrStore(agent, make(chan Received, 16))
	return ch.(chan Received)
}

func (l *fakeLink) Update(ctx context.Context, name string, arg, result any) error {
	if name == UpdateInbox { // waits: not under the lock
		in := arg.(InboxWait)
		select {
		case r := <-l.inboxOf(in.Agent):
			*result.(*[]Received) = []Received{r}
		case <-time.After(in.Wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch name {
	case UpdateSend:
		in := arg.(Send)
		l.sent = append(l.sent, in)
		l.inboxOf(in.To) <- Received{From: in.Agent, FromTask: in.Cue, Body: in.Body}
	case UpdateBBWrite:
		in := arg.(BBWrite)
		cur := l.board[in.Key]
		if (record.BlackboardPut{IfVersion: in.IfVersion}).Conflicts(cur.Version) {
			*result.(*BBWritten) = BBWritten{Version: cur.Version, Author: cur.Author, Conflict: true}
			return nil
		}
		v := BBValue{Found: true, Value: in.Value, Version: cur.Version + 1, Author: in.Agent}
		l.board[in.Key] = v
		var value any
		_ = json.Unmarshal(in.Value, &value)
		l.env.SignalWorkflow(SignalBBSet, BBSetSignal{Key: in.Key, Value: value, By: in.Agent})
		*result.(*BBWritten) = BBWritten{Version: v.Version, Author: v.Author}
	case UpdateAsk:
		in := arg.(Ask)
		l.asked = append(l.asked, in)
		answer := l.answer
		if answer == "" {
			answer = "navy"
		}
		*result.(*Asked) = Asked{ID: fmt.Sprintf("q%d", len(l.asked)), Answer: answer, By: "person"}
	default:
		return fmt.Errorf("no update %s", name)
	}
	return nil
}

func (l *fakeLink) Query(_ context.Context, name string, arg, result any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	*result.(*BBValue) = l.board[arg.(string)]
	return nil
}

func (l *fakeLink) Signal(_ context.Context, name string, arg any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.signals = append(l.signals, arg)
	return nil
}

// A jsonl agent's requests on a worker go to its run's workflow: writes
// (fenced, with a conflict), a read, a question whose answer comes back to
// it; a later cue on the blackboard's condition reads what it wrote.
func TestJSONLAgentRequestsReachTheWorkflow(t *testing.T) {
	root := repoRoot(t)
	path := "engine/temporal/testdata/collab/cuelist.yaml"
	env, link := linkedEnv(t, root, "")
	evs := completed(t, env, RunInput{RunID: testRunID("r-collab"), Path: path, SpecHash: specHashOf(t, root, path)})
	got := outputsOf(t, evs, "ASK-100")
	want := map[string]any{"v1": 1.0, "v2": 2.0, "conflict": "at 2 by collab-agent", "read": "green", "answer": "navy"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("output %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if len(link.asked) != 1 || link.asked[0].Question != "Which shade of green?" || link.asked[0].Cue != "ASK-100" || link.asked[0].Attempt != 1 {
		t.Errorf("asked %+v", link.asked)
	}
	want2 := []any{Report{Asker: link.asked[0].Asker, State: "working", Progress: 0.5, Detail: "asked the person"},
		UsageReport{Asker: link.asked[0].Asker, Totals: record.Usage{Credits: 3}, More: record.Usage{Credits: 3}}}
	if fmt.Sprint(link.signals) != fmt.Sprint(want2) {
		t.Errorf("signals %+v, want %+v", link.signals, want2)
	}
	if seen := outputsOf(t, evs, "READ-200")["seen"]; seen != "navy" {
		t.Errorf("READ-200 saw %v, want navy", seen)
	}
}

// linkedEnv is runEnv with the workflow reached through a fakeLink that
// answers every question with answer.
func linkedEnv(t *testing.T, root, answer string) (*testsuite.TestWorkflowEnvironment, *fakeLink) {
	t.Helper()
	env := newEnv()
	link := &fakeLink{env: env, board: map[string]BBValue{}, answer: answer}
	acts := &Activities{Root: root, Link: func(context.Context) WorkflowLink { return link }}
	t.Cleanup(acts.Close)
	RegisterWorkflow(env)
	RegisterActivities(env, acts)
	env.SetTestTimeout(2 * time.Minute)
	return env, link
}

// What agents report they used counts toward the run's limits: each report
// is recorded with the run's total, and a total beyond max_credits ends the
// run, as locally.
func TestUsageCountsTowardLimits(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/collab/held.yaml"
	env := runEnv(t, root)
	asker := Asker{Cue: "HOLD-100", Agent: "held", Attempt: 1}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalUsage, UsageReport{Asker: asker, Totals: record.Usage{Credits: 4}, More: record.Usage{Credits: 4}})
		env.SignalWorkflow(SignalUsage, UsageReport{Asker: asker, Totals: record.Usage{Credits: 12, CostUSD: 0.5}, More: record.Usage{Credits: 8, CostUSD: 0.5}})
	}, time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: testRunID("r-usage"), Path: path, SpecHash: specHashOf(t, root, path)})
	res, err := resultOf(env.GetWorkflowError(), env.GetWorkflowResult) // failed: the workflow closes Failed
	if err != nil {
		t.Fatal(err)
	}
	evs := events(t, env)
	if res.State != "failed" || !strings.Contains(res.Reason, "max_credits") {
		t.Fatalf("state %s (%s), want failed for max_credits\n%s", res.State, res.Reason, story(evs))
	}
	var totals []float64
	for _, e := range evs {
		if e.Type == record.EvUsage {
			b, _ := json.Marshal(e.Data)
			var d record.UsageData
			_ = json.Unmarshal(b, &d)
			totals = append(totals, d.RunTotal)
		}
	}
	if len(totals) != 2 || totals[0] != 4 || totals[1] != 12 {
		t.Errorf("run totals %v, want [4 12]", totals)
	}
}

// outputsOf is what the last attempt of cue ended with.
func outputsOf(t *testing.T, evs []record.Event, cue string) map[string]any {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		if e.Type != record.EvAttemptEnded || e.Cue != cue {
			continue
		}
		b, err := json.Marshal(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		var d record.AttemptEndedData
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		return d.Outputs
	}
	t.Fatalf("no attempt of %s ended\n%s", cue, story(evs))
	return nil
}

// A jsonl agent's message.send goes to the workflow; the recipient's worker
// takes its inbox from there and gives the agent message.received.
func TestJSONLMessagesOnWorkers(t *testing.T) {
	root := repoRoot(t)
	path := "engine/temporal/testdata/messages/cuelist.yaml"
	env, link := linkedEnv(t, root, "")
	evs := completed(t, env, RunInput{RunID: testRunID("r-msg"), Path: path, SpecHash: specHashOf(t, root, path)})
	if out := outputsOf(t, evs, "RECV-100"); out["got"] != "hello from the sender" || out["from"] != "msg-sender" {
		t.Errorf("RECV-100's outputs %v", out)
	}
	if len(link.sent) != 1 || link.sent[0].To != "msg-receiver" || link.sent[0].Cue != "SEND-100" || string(link.sent[0].Body) != `{"text":"hello from the sender"}` {
		t.Errorf("sent %+v", link.sent)
	}
}

// A GO given to a worker that did not run the attempt's WARNING and
// STANDBY (another worker did, or this one closed the agent's process
// meanwhile) tells the agent both first: the agent is always warned before
// GO. The attempt says so.
func TestPooledGoCatchesUp(t *testing.T) {
	root, path := repoRoot(t), "examples/protocol/cuelist.yaml"
	a := &Activities{Root: root}
	defer a.Close()
	in := AttemptInput{RunID: testRunID("r-catchup"), Path: path, SpecHash: specHashOf(t, root, path), Cue: "ECHO-100", Agent: "protocol-echo", Attempt: 1}
	in.Task = &attempt.Task{RunID: in.RunID, CueID: in.Cue, AgentID: in.Agent, Attempt: 1, Inputs: map[string]any{"greeting_name": "Lin"}}
	res, err := a.Go(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed || res.Outputs["greeting_name"] != "Lin" {
		t.Fatalf("%+v", res)
	}
	var noted bool
	for _, l := range res.Log {
		noted = noted || strings.Contains(l.Text, "WARNING and STANDBY of attempt 1 ran again on this worker first")
	}
	if !noted {
		t.Errorf("no note of the catch-up in %+v", res.Log)
	}
}

// update is an update's outcome in the test environment.
type update struct {
	rejected error
	done     bool
	result   any
	err      error
}

func sendUpdate(env *testsuite.TestWorkflowEnvironment, name, id string, arg any) *update {
	u := &update{}
	env.UpdateWorkflow(name, id, &testsuite.TestUpdateCallback{
		OnAccept:   func() {},
		OnReject:   func(err error) { u.rejected = err },
		OnComplete: func(r any, err error) { u.done, u.result, u.err = true, r, err },
	}, arg)
	return u
}

// The workflow's side of its agents' requests: a blackboard write is
// versioned and recorded, a fenced one at another version is a conflict
// (recorded, nothing written), a request of an attempt not in flight is
// rejected; a question is recorded, open until orch answer (a wrong id is a
// note), and a question whose asker ended is withdrawn.
func TestWorkflowServesRequests(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/collab/held.yaml"
	env := runEnv(t, root)
	asker := Asker{Cue: "HOLD-100", Agent: "held", Attempt: 1}
	zero := int64(0)
	var w1, w2, w3, a1, a2 *update
	var read BBValue
	env.RegisterDelayedCallback(func() { // HOLD-100 stands by for its GO
		w1 = sendUpdate(env, UpdateBBWrite, "w1", BBWrite{Asker: asker, Key: "k", Value: json.RawMessage(`"a"`)})
		w2 = sendUpdate(env, UpdateBBWrite, "w2", BBWrite{Asker: asker, Key: "k", Value: json.RawMessage(`"b"`), IfVersion: &zero})
		w3 = sendUpdate(env, UpdateBBWrite, "w3", BBWrite{Asker: Asker{Cue: "HOLD-100", Agent: "held", Attempt: 2}, Key: "k", Value: json.RawMessage(`"c"`)})
		a1 = sendUpdate(env, UpdateAsk, "a1", Ask{Asker: asker, Question: "Ship it?"})
		a2 = sendUpdate(env, UpdateAsk, "a2", Ask{Asker: asker, Question: "Really?"})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryBBRead, "k")
		if err == nil {
			err = v.Get(&read)
		}
		if err != nil {
			t.Errorf("bb-read: %v", err)
		}
		env.SignalWorkflow(SignalAnswer, AnswerSignal{Question: "q9", Answer: "no", By: "person"})
		env.SignalWorkflow(SignalAnswer, AnswerSignal{Question: "q1", Answer: "yes", By: "person"})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGo, GoSignal{Cue: "HOLD-100", By: "orch go"})
	}, 3*time.Minute)
	evs := completed(t, env, RunInput{RunID: testRunID("r-held"), Path: path, SpecHash: specHashOf(t, root, path)})
	if w1 == nil || !w1.done || w1.result.(BBWritten) != (BBWritten{Version: 1, Author: "held"}) {
		t.Errorf("write: %+v", w1)
	}
	if !w2.done || w2.result.(BBWritten) != (BBWritten{Version: 1, Author: "held", Conflict: true}) {
		t.Errorf("fenced write: %+v", w2)
	}
	if w3.rejected == nil || !strings.Contains(w3.rejected.Error(), "attempt 2 of held at cue HOLD-100 is not running") {
		t.Errorf("write of another attempt: %+v", w3)
	}
	if !read.Found || read.Version != 1 || string(read.Value) != `"a"` || read.Author != "held" {
		t.Errorf("read %+v", read)
	}
	if !a1.done || a1.result.(Asked) != (Asked{ID: "q1", Answer: "yes", By: "person"}) {
		t.Errorf("answered question: %+v", a1)
	}
	if !a2.done || a2.result.(Asked).Closed != "its asker's attempt ended" {
		t.Errorf("question of an ended attempt: %+v", a2)
	}
	var kinds []string
	for _, e := range evs {
		switch e.Type {
		case record.EvBlackboard, record.EvBlackboardConflict, record.EvQuestion:
			kinds = append(kinds, e.Type)
		case record.EvQuestionClosed, record.EvNote:
			kinds = append(kinds, e.Type+" "+e.State+" "+e.Reason)
		}
	}
	got := strings.Join(kinds, "\n")
	want := strings.Join([]string{record.EvBlackboard, record.EvBlackboardConflict, record.EvQuestion, record.EvQuestion,
		record.EvNote + "  orch answer q9: the run has no open question q9",
		record.EvQuestionClosed + " answered ",
		record.EvQuestionClosed + " withdrawn its asker's attempt ended"}, "\n")
	if got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}
