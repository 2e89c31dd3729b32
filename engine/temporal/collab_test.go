package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/record"
)

// A jsonl agent runs on a worker, through WARNING, STANDBY and GO (the
// example of the cue protocol on stdio).
func TestJSONLAgentOnWorker(t *testing.T) {
	root, path := repoRoot(t), "examples/protocol/cuelist.yaml"
	env := runEnv(t, root)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: "r-jsonl", Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"greeting_name": "Grace"}})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	evs := events(t, env)
	out := outputsOf(t, evs, "ECHO-100")
	if res.State != "completed" || out["greeting_name"] != "Grace" {
		t.Fatalf("%s, outputs %v, want greeting_name Grace\n%s", res.State, out, story(evs))
	}
}

// fakeLink is the workflow as a worker's attempt reaches it, in memory: the
// blackboard with the store's conflict rule, every question answered at
// once; writes are also set on the workflow's board (orch.bb-set), so that
// a cue's conditions see them.
type fakeLink struct {
	env   *testsuite.TestWorkflowEnvironment
	mu    sync.Mutex
	board map[string]BBValue
	asked []Ask
}

func (l *fakeLink) Update(_ context.Context, name string, arg, result any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch name {
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
		*result.(*Asked) = Asked{ID: fmt.Sprintf("q%d", len(l.asked)), Answer: "navy", By: "person"}
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

func (l *fakeLink) Signal(context.Context, string, any) error { return nil }

// A jsonl agent's requests on a worker go to its run's workflow: writes
// (fenced, with a conflict), a read, a question whose answer comes back to
// it; a later cue on the blackboard's condition reads what it wrote.
func TestJSONLAgentRequestsReachTheWorkflow(t *testing.T) {
	root := repoRoot(t)
	path := "engine/temporal/testdata/collab/cuelist.yaml"
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	link := &fakeLink{env: env, board: map[string]BBValue{}}
	RegisterWorkflow(env)
	RegisterActivities(env, &Activities{Root: root, Link: func(context.Context) WorkflowLink { return link }})
	env.SetTestTimeout(2 * 60e9)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: "r-collab", Path: path, SpecHash: specHashOf(t, root, path)})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	evs := events(t, env)
	if res.State != "completed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
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
	if seen := outputsOf(t, evs, "READ-200")["seen"]; seen != "navy" {
		t.Errorf("READ-200 saw %v, want navy", seen)
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

// A GO given to a worker that did not run the attempt's WARNING and
// STANDBY (another worker did, or this one closed the agent's process
// meanwhile) tells the agent both first: the agent is always warned before
// GO. The attempt says so.
func TestPooledGoCatchesUp(t *testing.T) {
	root, path := repoRoot(t), "examples/protocol/cuelist.yaml"
	a := &Activities{Root: root}
	defer a.Close()
	in := AttemptInput{RunID: "r-catchup", Path: path, SpecHash: specHashOf(t, root, path), Cue: "ECHO-100", Agent: "protocol-echo", Attempt: 1}
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
