package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// envLink is the workflow as a worker's attempt reaches it, in the SDK's
// test environment: the real update, query and signal handlers, each call
// posted to the environment's own loop (which is not safe for other
// goroutines).
type envLink struct {
	env *testsuite.TestWorkflowEnvironment
}

type linkAnswer struct {
	v   any
	err error
}

func (l envLink) call(ctx context.Context, result any, do func(done func(any, error))) error {
	ch := make(chan linkAnswer, 1)
	l.env.RegisterDelayedCallback(func() { do(func(v any, err error) { ch <- linkAnswer{v, err} }) }, 0)
	select {
	case a := <-ch:
		if a.err != nil || result == nil {
			return a.err
		}
		b, err := json.Marshal(a.v)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, result)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l envLink) Update(ctx context.Context, name string, arg, result any) error {
	return l.call(ctx, result, func(done func(any, error)) {
		l.env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{OnAccept: func() {},
			OnReject: func(err error) { done(nil, err) }, OnComplete: done}, arg)
	})
}

func (l envLink) Query(ctx context.Context, name string, arg, result any) error {
	return l.call(ctx, nil, func(done func(any, error)) {
		v, err := l.env.QueryWorkflow(name, arg)
		if err == nil {
			err = v.Get(result)
		}
		done(nil, err)
	})
}

func (l envLink) Signal(_ context.Context, name string, arg any) error {
	l.env.SignalWorkflow(name, arg)
	return nil
}

// realEnv is runEnv with the attempts reaching the workflow's own handlers.
func realEnv(t *testing.T, root string) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newEnv()
	acts := &Activities{Root: root, Link: func(context.Context) WorkflowLink { return envLink{env} }, SearchMemory: store.SearchItems}
	t.Cleanup(acts.Close)
	RegisterWorkflow(env)
	RegisterActivities(env, acts)
	env.SetTestTimeout(2 * time.Minute)
	return env
}

// A jsonl agent on a worker hands off and spawns through the workflow, as
// locally: the handoff's receiver runs as its child (CUE/1) with the
// handoff_context, and its result comes back as handoff.result; a handoff
// to an agent not in its handoff_to is refused with the reason; a handoff
// beyond max_handoff_depth, and back up the chain, is refused by the
// workflow's tree; a spawned child inherits the cue's inputs and its end is
// announced (task.announce), and its parent's message reaches it while it
// is at work, by its task id. Each child is recorded (task/started, its
// attempt, its end); the cue accepts child exports: their outputs merge
// into its own.
func TestHandoffAndSpawnOnWorkers(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/children/cuelist.yaml"
	evs := completed(t, realEnv(t, root), RunInput{RunID: testRunID("r-kids"), Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"topic": "tides"}})
	out := outputsOf(t, evs, "LEAD-100")
	b, _ := json.Marshal(out)
	got := strings.ReplaceAll(string(b), `\u003e`, ">")
	for _, want := range []string{
		`"handoff":{"answer":"RIVERS",`, `"task":"LEAD-100/1"`, `"parent":"LEAD-100"`, `"depth":1`,
		`"refused":"refused: agent \"kid-lead\" may not hand off to \"nobody\": not in its handoff_to (it allows \"kid-helper\")"`,
		`"spawned":"LEAD-100/2"`, `"announced":{"answer":"TIDES","heard":"hello child","status":"completed","task":"LEAD-100/2"}`,
		`"deeper":"refused: the handoff would be at depth 2, beyond max_handoff_depth 1 (chain: kid-lead -> kid-helper -> kid-lead); handoff cycle: kid-lead -> kid-helper -> kid-lead (agent kid-lead is already in the chain)"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in LEAD-100's outputs %s", want, got)
		}
	}
	if out["answer"] != "TIDES" || out["task"] != "LEAD-100/2" { // accept_child_exports: the helpers' outputs, the later one's winning
		t.Errorf("the children's exports are not in LEAD-100's outputs: %s", got)
	}
	var tree []string
	for _, e := range evs {
		switch {
		case e.Type == record.EvTaskStarted:
			b, _ := json.Marshal(e.Data)
			var d record.TaskStartedData
			_ = json.Unmarshal(b, &d)
			tree = append(tree, fmt.Sprintf("%s %s under %s (%s, depth %d, %v)", e.Cue, e.Agent, d.Parent, d.Kind, d.Depth, d.Context))
		case e.Type == record.EvCueState && strings.HasPrefix(e.Cue, "LEAD-100/"):
			tree = append(tree, e.Cue+" "+e.State)
		case e.Type == record.EvNote && strings.Contains(e.Reason, "refused"):
			tree = append(tree, e.Cue+" note: "+e.Reason[:strings.Index(e.Reason, ":")])
		}
	}
	want := []string{
		"LEAD-100/1 kid-helper under LEAD-100 (handoff, depth 1, map[topic:rivers])",
		"LEAD-100/1 warning", "LEAD-100/1 standby", "LEAD-100/1 go",
		"LEAD-100/1 note: handoff from kid-helper to kid-lead refused",
		"LEAD-100/1 completed",
		"LEAD-100/2 kid-helper under LEAD-100 (spawn, depth 1, map[listen:true])",
		"LEAD-100/2 warning", "LEAD-100/2 standby", "LEAD-100/2 go",
		"LEAD-100/2 note: handoff from kid-helper to kid-lead refused",
		"LEAD-100/2 completed",
	}
	if strings.Join(tree, "\n") != strings.Join(want, "\n") {
		t.Errorf("the tree's events:\n%s\nwant:\n%s\n%s", strings.Join(tree, "\n"), strings.Join(want, "\n"), story(evs))
	}
	// Their protocol messages are in the run's log, as locally.
	phases := []string{"out coord.warning", "in ack.warning", "out coord.standby", "in ack.standby", "out coord.go"}
	lead := append(append([]string{}, phases...), "in task.handoff", "out handoff.result", "in task.handoff", "out handoff.result",
		"in task.spawn", "out spawn.accepted", "out task.announce", "in task.complete")
	helper := append(append([]string{}, phases...), "in task.handoff", "out handoff.result", "in task.complete")
	for cue, want := range map[string][]string{"LEAD-100": lead, "LEAD-100/1": helper, "LEAD-100/2": helper} {
		// Less the message to the child, sent until it is at work, and its
		// delivery, which comes when it comes.
		var got []string
		for _, m := range messagesOf(evs, cue) {
			if !strings.Contains(m, "message.") && !strings.Contains(m, "delivery.failed") {
				got = append(got, m)
			}
		}
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("%s's messages:\n%s\nwant:\n%s", cue, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// What agents show the person, a broadcast and the agents list go through
// the workflow, as locally: the talker lists the tasks at work (the
// hearer's reported state included), broadcasts to them (the hearer gets a
// broadcast.notice), and its message, discovery and escalations are
// recorded for the person (run/user events).
func TestPersonBroadcastAndAgentsOnWorkers(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/people/cuelist.yaml"
	env := realEnv(t, root)
	evs := completed(t, env, RunInput{RunID: testRunID("r-people"), Path: path, SpecHash: specHashOf(t, root, path)})
	talk, _ := json.Marshal(outputsOf(t, evs, "TALK-100"))
	if want := `{"listed":["HEAR-100 hearer listening","TALK-100 talker working"],"reached":["HEAR-100"]}`; string(talk) != want {
		t.Errorf("TALK-100's outputs %s, want %s", talk, want)
	}
	hear, _ := json.Marshal(outputsOf(t, evs, "HEAR-100"))
	if want := `{"from":"talker","heard":{"text":"all hands"}}`; string(hear) != want {
		t.Errorf("HEAR-100's outputs %s, want %s", hear, want)
	}
	var shown []string
	for _, e := range evs {
		if e.Type == record.EvUserMessage {
			b, _ := json.Marshal(e.Data)
			shown = append(shown, e.Cue+" "+string(b))
		}
	}
	want := []string{
		`TALK-100 {"kind":"broadcast","from":"talker","to":"HEAR-100","body":{"text":"all hands"}}`,
		`TALK-100 {"kind":"message","from":"talker","body":{"text":"half way, token [redacted:PEOPLE_API_TOKEN]"}}`,
		`TALK-100 {"kind":"discovery","from":"talker","body":{"summary":"the cache is cold"}}`,
		`TALK-100 {"kind":"escalation","from":"talker","body":{"detail":{"free":"2%"},"error":"disk almost full","severity":"high"}}`,
		`TALK-100 {"kind":"escalation","from":"talker","body":{"error":"resource conflict over db: both migrate","severity":"medium"}}`,
	}
	if strings.Join(shown, "\n") != strings.Join(want, "\n") {
		t.Errorf("shown to the person:\n%s\nwant:\n%s", strings.Join(shown, "\n"), strings.Join(want, "\n"))
	} // The secret in its environment is masked wherever it was recorded:
	// the message.user's record, the person's view of it, the agent's output.
	all, _ := json.Marshal(evs)
	v, err := env.QueryWorkflow(QueryEvents, int64(0))
	var page EventsPage
	if err == nil {
		err = v.Get(&page)
	}
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := json.Marshal(page.Logs)
	if !strings.Contains(string(logs), "the token is [redacted:PEOPLE_API_TOKEN]") {
		t.Errorf("the agent's line is not in its log, masked: %s", logs)
	}
	if strings.Contains(string(all)+string(logs), "tok-people-1234") {
		t.Errorf("the secret is in the run's events")
	}
	if !strings.Contains(string(all), `[redacted:PEOPLE_API_TOKEN]`) || len(messagesOf(evs, "TALK-100")) == 0 {
		t.Errorf("no masked secret, or no messages, in the run's events:\n%s", all)
	}
}

// messagesOf lists the protocol messages recorded for a task's attempt:
// direction and type, one a line.
func messagesOf(evs []record.Event, cue string) []string {
	var out []string
	for _, e := range evs {
		if e.Type == record.EvMessage && e.Cue == cue {
			d, _ := e.Data.(record.MessageData)
			out = append(out, d.Direction+" "+d.Type)
		}
	}
	return out
}

// A child ends with the attempt that started it: a spawned helper still at
// work when its lead's GO ends is stopped, saying why, and nothing is
// announced to the lead, which is gone.
func TestChildEndsWithItsParent(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/children/orphan.yaml"
	evs := completed(t, realEnv(t, root), RunInput{RunID: testRunID("r-orphan"), Path: path, SpecHash: specHashOf(t, root, path)})
	var got []string
	for _, e := range evs {
		if e.Cue == "QUICK-100/1" && (e.Type == record.EvCueState || e.Type == record.EvAttemptEnded) {
			got = append(got, e.Type+" "+e.State+" "+e.Reason)
		}
	}
	want := []string{record.EvCueState + " warning ", record.EvCueState + " standby ", record.EvCueState + " go ",
		record.EvAttemptEnded + " stopped their parent's attempt ended", record.EvCueState + " stopped their parent's attempt ended"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the child's events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range messagesOf(evs, "QUICK-100") {
		if strings.Contains(m, "task.announce") {
			t.Errorf("the lead was told of its child's end after its own: %v", messagesOf(evs, "QUICK-100"))
		}
	}
}

// An ACP agent's handoff and spawn through orch's MCP tools on a worker go
// the same way: the handoff waits for the receiver's end, the spawn answers
// with the child's task id.
func TestMCPHandoffAndSpawnOnWorker(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	yaml := fmt.Sprintf(`agent:
  id: coder
  protocol: acp
  command: [%q, mcp, 'handoff {"to_agent": "checker", "task_id": "T1", "context": {"pkg": "./..."}}', 'spawn {"agent": "checker"}', 'handoff {"to_agent": "nobody", "context": {}}']
  env: {ORCH_FAKE_ACP: "1", FAKE_ACP_MCP_HTTP: "1"}
  handoff_to: [checker]
  provides: [text]
---
agent:
  id: checker
  command: ["true"]
---
cuelist:
  id: mcp-kids
  cues:
    - {id: w, agents: [coder]}
`, self)
	if err := os.WriteFile(filepath.Join(root, "c.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	evs := completed(t, realEnv(t, root), RunInput{RunID: testRunID("r-mcp-kids"), Path: "c.yaml", SpecHash: specHashOf(t, root, "c.yaml")})
	text, _ := outputsOf(t, evs, "w")["text"].(string)
	for _, want := range []string{`handoff: {"outputs":{},"status":"completed"}`, `spawn: {"task_id":"w/2"}`, `not in its handoff_to`} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the agent's reply:\n%s", want, text)
		}
	}
}
