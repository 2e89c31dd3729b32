//go:build unix

package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// scriptAgent returns an agent document running scriptagent; extra is more
// of the agent's fields ("handoff_to: [b]").
func scriptAgent(t *testing.T, id, extra string) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf("agent: {id: %s, protocol: jsonl, command: [%q], env: {ORCH_SCRIPT_AGENT: \"1\"}%s}\n", id, self, extra)
}

// collab compiles a cuelist whose agents are script agents.
func collab(t *testing.T, cuelist string, agents ...string) *Options {
	t.Helper()
	p, dir := project(t, map[string]string{
		"cuelist.yaml": "cuelist:\n  id: collab\n  include: [agents.yaml]\n" + cuelist,
		"agents.yaml":  strings.Join(agents, "---\n"),
	})
	return &Options{Plan: p, ProjectRoot: dir}
}

func runCollab(t *testing.T, o *Options, rec *memRecorder, mod func(*Options)) *Result {
	t.Helper()
	return runPlan(t, o.Plan, rec, func(opts *Options) {
		opts.ProjectRoot = o.ProjectRoot
		if mod != nil {
			mod(opts)
		}
	})
}

// outputsOf returns the outputs a cue (or child task) completed with.
func outputsOf(t *testing.T, rec *memRecorder, cue string) map[string]any {
	t.Helper()
	for _, e := range rec.of(record.EvCueState) {
		if e.Cue == cue && e.State == string(record.CueCompleted) {
			var d record.CueStateData
			asData(e.Data, &d)
			return d.Outputs
		}
	}
	t.Fatalf("cue %s did not complete: %v (%s)", cue, rec.cueStates()[cue], reasonOf(rec, cue))
	return nil
}

func field(v any, path ...string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func TestHandoffRunsChildAndReturnsResult(t *testing.T) {
	o := collab(t, `  cues:
    - id: LEAD
      agents: [lead]
      inputs:
        script:
          - handoff: {to: helper, task_id: T-1, context: {task_description: sum, script: [{output: {sum: 3}}]}}
`, scriptAgent(t, "lead", "handoff_to: [helper]"), scriptAgent(t, "helper", "requires: [task_description], provides: [sum]"))
	rec := newMemRecorder()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	got := outputsOf(t, rec, "LEAD")["handoff_helper"]
	if field(got, "status") != "completed" || field(got, "outputs", "sum") != float64(3) {
		t.Errorf("handoff result: %v", got)
	}
	started := rec.of(record.EvTaskStarted)
	if len(started) != 1 || started[0].Cue != "LEAD/1" || started[0].Agent != "helper" {
		t.Fatalf("task/started: %+v", started)
	}
	var d record.TaskStartedData
	asData(started[0].Data, &d)
	if d.Parent != "LEAD" || d.Kind != "handoff" || d.TaskRef != "T-1" || d.Depth != 1 || strings.Join(d.Chain, ",") != "lead,helper" ||
		d.Context["task_description"] != "sum" {
		t.Errorf("task data: %+v", d)
	}
	if outputsOf(t, rec, "LEAD/1")["sum"] != float64(3) {
		t.Error("the child's outputs are not recorded")
	}
	var attempts []string
	for _, e := range rec.of(record.EvAttemptStarted) {
		attempts = append(attempts, fmt.Sprintf("%s:%s:%d", e.Cue, e.Agent, e.Attempt))
	}
	if strings.Join(attempts, " ") != "LEAD:lead:1 LEAD/1:helper:1" {
		t.Errorf("attempts: %v", attempts)
	}
}

func TestHandoffRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, guard, lead, helper, helper2, script string
		want                                       []string
	}{
		{name: "allowlist", lead: "handoff_to: [other]", helper: "", script: `{handoff: {to: helper, task_id: T, context: {}}}`,
			want: []string{`may not hand off to "helper"`, `it allows "other"`}},
		{name: "requires", lead: "handoff_to: [helper]", helper: "requires: [task_description, acceptance_criteria]",
			script: `{handoff: {to: helper, task_id: T, context: {task_description: x}}}`,
			want:   []string{`handoff_context lacks "acceptance_criteria"`}},
		{name: "tools", lead: "handoff_to: [helper], tools: {deny: [handoff]}", script: `{handoff: {to: helper, task_id: T, context: {}}}`,
			want: []string{`may not use "handoff"`}},
		{name: "artifact", lead: "handoff_to: [helper]",
			script: `{handoff: {to: helper, task_id: T, context: {artifacts_produced: [{path: ../secret}]}}}`,
			want:   []string{"../secret"}},
		{name: "depth", guard: "  guardrails: {max_handoff_depth: 1}\n", lead: "handoff_to: [helper]", helper: "handoff_to: [helper2]",
			script: `{handoff: {to: helper, task_id: T, context: {script: [{handoff: {to: helper2, task_id: U, context: {}}}]}}}`,
			want:   []string{"depth 2, beyond max_handoff_depth 1", "lead -> helper -> helper2"}},
		{name: "cycle", lead: "handoff_to: [helper]", helper: "handoff_to: [lead]",
			script: `{handoff: {to: helper, task_id: T, context: {script: [{handoff: {to: lead, task_id: U, context: {}}}]}}}`,
			want:   []string{"handoff cycle: lead -> helper -> lead"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := collab(t, tc.guard+"  cues:\n    - {id: C, agents: [lead], inputs: {script: ["+tc.script+"]}}\n",
				scriptAgent(t, "lead", tc.lead), scriptAgent(t, "helper", tc.helper), scriptAgent(t, "other", ""), scriptAgent(t, "helper2", ""))
			rec := newMemRecorder()
			if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
				t.Fatalf("run %s: %s", res.State, res.Reason)
			}
			var results []map[string]any
			for _, e := range rec.of(record.EvMessage) {
				var d record.MessageData
				asData(e.Data, &d)
				if d.Type == "handoff.result" {
					var m map[string]any
					_ = json.Unmarshal(d.Body, &m)
					results = append(results, m)
				}
			}
			var refused map[string]any
			for _, m := range results {
				if m["status"] == "refused" {
					refused = m
				}
			}
			if refused == nil {
				t.Fatalf("no refusal among %v", results)
			}
			for _, w := range tc.want {
				if !strings.Contains(fmt.Sprint(refused["reason"]), w) {
					t.Errorf("reason %q lacks %q", refused["reason"], w)
				}
			}
		})
	}
}

func TestQuestionAnsweredByParent(t *testing.T) {
	o := collab(t, `  cues:
    - id: C
      agents: [lead]
      inputs:
        script:
          - answer_questions: "use port 8080"
          - handoff: {to: helper, task_id: T, context: {script: [{ask: {question: "which port?", complexity: quick}}, {output: {}}]}}
`, scriptAgent(t, "lead", "handoff_to: [helper]"), scriptAgent(t, "helper", ""))
	rec := newMemRecorder()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	if got := field(outputsOf(t, rec, "C")["handoff_helper"], "outputs", "answer"); got != "use port 8080" {
		t.Errorf("the child's answer: %v", got)
	}
	asked := rec.of(record.EvQuestion)
	if len(asked) != 1 {
		t.Fatalf("questions: %+v", asked)
	}
	var q record.QuestionData
	asData(asked[0].Data, &q)
	if q.ID != "q1" || q.To != "lead" || q.Complexity != "quick" || asked[0].Cue != "C/1" {
		t.Errorf("question: %+v on %s", q, asked[0].Cue)
	}
	closed := rec.of(record.EvQuestionClosed)
	var a record.AnswerData
	if len(closed) == 1 {
		asData(closed[0].Data, &a)
	}
	if len(closed) != 1 || closed[0].State != record.QuestionAnswered || a.By != "lead" || a.Answer != "use port 8080" {
		t.Errorf("closed: %+v %+v", closed, a)
	}
}

func TestQuestionBubblesToPerson(t *testing.T) {
	cuelist := `  cues:
    - id: C
      agents: [lead]
      inputs:
        script:
          - pass_up_questions: true
          - handoff: {to: helper, task_id: T, context: {script: [{ask: {question: "ship it?", complexity: deep}}]}}
`
	agents := []string{scriptAgent(t, "lead", "handoff_to: [helper]"), scriptAgent(t, "helper", "")}

	t.Run("terminal", func(t *testing.T) {
		var prompts []QuestionPrompt
		rec := newMemRecorder()
		res := runCollab(t, collab(t, cuelist, agents...), rec, func(o *Options) {
			o.Ask = func(_ context.Context, q QuestionPrompt) (string, bool) {
				prompts = append(prompts, q)
				return "yes, ship", true
			}
		})
		if res.State != record.RunCompleted {
			t.Fatalf("run %s: %s", res.State, res.Reason)
		}
		// The helper asks the lead (q1), the lead passes it up (q2, to the person).
		if len(prompts) != 1 || prompts[0].ID != "q2" || prompts[0].Complexity != "deep" || prompts[0].Agent != "lead" {
			t.Fatalf("prompts: %+v", prompts)
		}
		if got := field(outputsOf(t, rec, "C")["handoff_helper"], "outputs", "answer"); got != "yes, ship" {
			t.Errorf("answer: %v", got)
		}
	})
	t.Run("orch answer", func(t *testing.T) {
		rec := newMemRecorder()
		go func() { // what orch answer does: a command through the store, once q2 is open
			for len(rec.of(record.EvQuestion)) < 2 {
				time.Sleep(10 * time.Millisecond)
			}
			rec.mu.Lock()
			rec.commands = append(rec.commands, record.Command{ID: 1, RunID: rec.events[0].RunID, Kind: "answer", Cue: "q2", Arg: "go ahead"})
			rec.mu.Unlock()
		}()
		if res := runCollab(t, collab(t, cuelist, agents...), rec, nil); res.State != record.RunCompleted {
			t.Fatalf("run %s: %s", res.State, res.Reason)
		}
		if got := field(outputsOf(t, rec, "C")["handoff_helper"], "outputs", "answer"); got != "go ahead" {
			t.Errorf("answer: %v", got)
		}
	})
}

func TestQuestionTimeoutFailsAsker(t *testing.T) {
	o := collab(t, `  guardrails: {question_timeout: 300ms}
  cues:
    - {id: C, agents: [asker], inputs: {script: [{ask: {question: "anyone?", complexity: quick}}]}}
`, scriptAgent(t, "asker", ""))
	rec := newMemRecorder()
	res := runCollab(t, o, rec, nil)
	if res.State != record.RunFailed || !strings.Contains(reasonOf(rec, "C"), "question q1 was not answered within 300ms") {
		t.Fatalf("run %s: %s / %s", res.State, res.Reason, reasonOf(rec, "C"))
	}
	if closed := rec.of(record.EvQuestionClosed); len(closed) != 1 || closed[0].State != record.QuestionUnanswered {
		t.Errorf("closed: %+v", closed)
	}
	ended := rec.of(record.EvAttemptEnded)
	var d record.AttemptEndedData
	asData(ended[len(ended)-1].Data, &d)
	if d.Class != "unanswered" {
		t.Errorf("class %q", d.Class)
	}
}

func TestSiblingMessages(t *testing.T) {
	o := collab(t, `  max_parallel: 3
  guardrails: {loop_warn: 100000, loop_block: 100000}   # TALK polls the blackboard
  cues:
    - {id: QUICK, agents: [quick], inputs: {script: [{output: {}}]}}
    - {id: LISTEN, agents: [listener], inputs: {script: [{bb_write: {key: listening, value: true}}, {await_messages: 1}]}}
    - id: TALK
      agents: [talker]
      dependencies: [QUICK]
      inputs: {script: [{await_key: listening}, {send: {to: listener, body: {hello: 1}}}, {send: {to: quick, body: late}}, {send: {to: nobody, body: x}}]}
`, scriptAgent(t, "quick", ""), scriptAgent(t, "listener", ""), scriptAgent(t, "talker", ""))
	rec := newMemRecorder()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	got := outputsOf(t, rec, "LISTEN")["received"]
	if fmt.Sprint(got) != "[map[body:map[hello:1] from:talker]]" {
		t.Errorf("received %v", got)
	}
	out := outputsOf(t, rec, "TALK")
	if out["sent_listener"] != "ok" || !strings.Contains(fmt.Sprint(out["sent_quick"]), "quick ended (task QUICK completed)") ||
		!strings.Contains(fmt.Sprint(out["sent_nobody"]), `unknown: no task or agent of this run is named "nobody"`) {
		t.Errorf("sends: %v", out)
	}
	var notices []string
	for _, e := range rec.of(record.EvUserMessage) {
		var d record.UserMessageData
		asData(e.Data, &d)
		notices = append(notices, d.Kind+":"+d.From+"->"+d.To)
	}
	if strings.Join(notices, " ") != "notice:talker->listener" {
		t.Errorf("the person (the roots' parent) was told: %v", notices)
	}
}

func TestSpawnAndAnnounce(t *testing.T) {
	o := collab(t, `  cues:
    - id: LEAD
      agents: [lead]
      inputs:
        script:
          - spawn: {agent: researcher, inputs: {topic: a, script: [{output: {found: a}}]}}
          - spawn: {agent: researcher, inputs: {topic: b, script: [{sleep: 100ms}, {output: {found: b}}]}}
          - spawn: {agent: lead, inputs: {}}
          - await_announcements: 2
`, scriptAgent(t, "lead", "handoff_to: [researcher]"), scriptAgent(t, "researcher", "requires: [topic]"))
	rec := newMemRecorder()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	out := outputsOf(t, rec, "LEAD")
	if fmt.Sprint(out["spawned"]) != "[LEAD/1 LEAD/2]" || !strings.Contains(fmt.Sprint(out["spawn_error"]), "not in its handoff_to") {
		t.Errorf("spawns: %v", out)
	}
	found := map[string]bool{}
	for _, a := range out["announced"].([]any) {
		if field(a, "status") != "completed" {
			t.Errorf("announcement %v", a)
		}
		found[fmt.Sprint(field(a, "outputs", "found"))] = true
	}
	if !found["a"] || !found["b"] {
		t.Errorf("announcements: %v", out["announced"])
	}
}

func TestParentEndStopsChildren(t *testing.T) {
	o := collab(t, `  cues:
    - id: LEAD
      agents: [lead]
      inputs: {script: [{spawn: {agent: sleeper, inputs: {script: [{sleep: 30s}]}}}, {output: {done: true}}]}
`, scriptAgent(t, "lead", "handoff_to: [sleeper]"), scriptAgent(t, "sleeper", ""))
	rec := newMemRecorder()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	if s := rec.cueStates()["LEAD/1"]; s != string(record.CueStopped) {
		t.Errorf("the child is %q, want stopped", s)
	}
}

func TestCascadeStopReachesChildren(t *testing.T) {
	o := collab(t, `  cues:
    - id: LEAD
      agents: [lead]
      inputs: {script: [{spawn: {agent: sleeper, inputs: {script: [{sleep: 30s}]}}}, {sleep: 30s}]}
`, scriptAgent(t, "lead", "handoff_to: [sleeper]"), scriptAgent(t, "sleeper", ""))
	rec := newMemRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(rec.of(record.EvTaskStarted)) == 0 || rec.cueStates()["LEAD/1"] != string(record.CueGo) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	res, err := Run(ctx, Options{Plan: o.Plan, Recorder: rec, KillGrace: 300 * time.Millisecond})
	if err != nil || res.State != record.RunStopped {
		t.Fatalf("run %v %v", res, err)
	}
	states := rec.cueStates()
	if states["LEAD"] != string(record.CueStopped) || states["LEAD/1"] != string(record.CueStopped) {
		t.Errorf("states %v", states)
	}
}

func TestLoopGuardThresholds(t *testing.T) {
	o := collab(t, `  guardrails: {loop_warn: 3, loop_block: 5, loop_fail: 7}
  cues:
    - {id: FOUR, agents: [a], inputs: {script: [{repeat: {times: 4, step: {bb_read: k}}}, {output: {ok: true}}]}}
    - {id: SIX, agents: [b], inputs: {script: [{repeat: {times: 6, step: {try: {bb_read: k}}}}]}}
    - {id: SEVEN, agents: [c], inputs: {script: [{repeat: {times: 7, step: {try: {bb_read: k}}}}]}}
    - {id: WRITES, agents: [d], inputs: {script: [{repeat: {times: 6, step: {try: {bb_write: {key: w, value: 1}}}}}, {bb_write: {key: w2, value: 2}}]}}
`, scriptAgent(t, "a", ""), scriptAgent(t, "b", ""), scriptAgent(t, "c", ""), scriptAgent(t, "d", ""))
	rec := newMemRecorder()
	runCollab(t, o, rec, nil)
	wantStates(t, rec, map[string]string{"FOUR": "completed", "SIX": "completed", "SEVEN": "failed", "WRITES": "completed"})
	if r := reasonOf(rec, "SEVEN"); !strings.Contains(r, "loop detected: c sent the same blackboard.read 7 times (loop_fail 7)") {
		t.Errorf("reason %q", r)
	}
	count := map[string]int{}
	for _, e := range rec.of(record.EvGuard) {
		count[e.Cue]++
	}
	// warnings at 3 and 4; blocks at 5 and 6; SEVEN: those and the failure
	if count["FOUR"] != 2 || count["SIX"] != 4 || count["SEVEN"] != 5 || count["WRITES"] != 4 {
		t.Errorf("guard events %v", count)
	}
	board, _ := rec.Blackboard(context.Background(), rec.of(record.EvGuard)[0].RunID)
	if board["w"].Version != 4 || board["w2"].Version != 1 { // the 5th and 6th writes were blocked
		t.Errorf("board %v", board)
	}
}

func TestCreditsExhaustedStopsBeforeNextGo(t *testing.T) {
	o := collab(t, `  limits: {max_credits: 10}
  cues:
    - {id: SPEND, agents: [a], inputs: {script: [{usage: 4}, {usage: 12}, {sleep: 10s}]}}
    - {id: NEXT, agents: [b], dependencies: [SPEND], inputs: {script: []}}
`, scriptAgent(t, "a", ""), scriptAgent(t, "b", ""))
	rec := newMemRecorder()
	res := runCollab(t, o, rec, nil)
	if res.State != record.RunFailed || !strings.Contains(res.Reason, "limit max_credits reached (12 of 10 used)") {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	if len(rec.of(record.EvExhausted)) != 1 {
		t.Errorf("exhausted events: %v", rec.of(record.EvExhausted))
	}
	for _, e := range rec.of(record.EvCueState) {
		if e.Cue == "NEXT" && e.State == string(record.CueGo) {
			t.Error("NEXT got GO after the credits ran out")
		}
	}
	var totals []float64
	for _, e := range rec.of(record.EvUsage) {
		var d record.UsageData
		asData(e.Data, &d)
		totals = append(totals, d.RunTotal)
	}
	if fmt.Sprint(totals) != "[4 12]" {
		t.Errorf("run totals %v", totals)
	}
}

// A driver's cost counts toward max_cost_usd as credits count toward
// max_credits: the same halt, before the next GO.
func TestCostExhaustedStopsBeforeNextGo(t *testing.T) {
	o := collab(t, `  limits: {max_cost_usd: 1.5}
  cues:
    - {id: SPEND, agents: [a], inputs: {script: [{cost: {credits: 3, cost_usd: 0.5, input_tokens: 100}}, {cost: {credits: 3, cost_usd: 1.75, output_tokens: 40}}, {sleep: 10s}]}}
    - {id: NEXT, agents: [b], dependencies: [SPEND], inputs: {script: []}}
`, scriptAgent(t, "a", ""), scriptAgent(t, "b", ""))
	rec := newMemRecorder()
	res := runCollab(t, o, rec, nil)
	if res.State != record.RunFailed || !strings.Contains(res.Reason, "limit max_cost_usd reached ($1.75 of $1.50 used)") {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	if len(rec.of(record.EvExhausted)) != 1 {
		t.Errorf("exhausted events: %v", rec.of(record.EvExhausted))
	}
	for _, e := range rec.of(record.EvCueState) {
		if e.Cue == "NEXT" && e.State == string(record.CueGo) {
			t.Error("NEXT got GO after the cost limit was reached")
		}
	}
	var last record.UsageData
	for _, e := range rec.of(record.EvUsage) {
		asData(e.Data, &last)
	}
	// The second report leaves input_tokens out: the attempt's total stays.
	if want := (record.UsageData{Credits: 3, RunTotal: 3, CostUSD: 1.75, InputTokens: 100, OutputTokens: 40,
		RunCostUSD: 1.75, RunInputTokens: 100, RunOutputTokens: 40}); last != want {
		t.Errorf("last usage %+v, want %+v", last, want)
	}
}

func TestMaxDuration(t *testing.T) {
	o := collab(t, `  limits: {max_duration: 300ms}
  cues:
    - {id: SLOW, agents: [a], inputs: {script: [{sleep: 10s}]}}
`, scriptAgent(t, "a", ""))
	rec := newMemRecorder()
	res := runCollab(t, o, rec, nil)
	if res.State != record.RunFailed || !strings.Contains(res.Reason, "limit max_duration reached") {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	if s := rec.cueStates()["SLOW"]; s != string(record.CueStopped) {
		t.Errorf("SLOW is %q, want stopped", s)
	}
}

func TestMemoryThroughProtocol(t *testing.T) {
	o := collab(t, `  cues:
    - {id: W, agents: [a], inputs: {script: [{memory_write: {key: k1, text: the deploy needs a vpn, tags: [ops]}}]}}
    - {id: R, agents: [a], dependencies: [W], inputs: {script: [{memory_search: vpn}]}}
`, scriptAgent(t, "a", ""))
	rec := newMemRecorder()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	if got := fmt.Sprint(outputsOf(t, rec, "R")["memory"]); got != "[k1]" {
		t.Errorf("search found %s", got)
	}
}

func TestFloodIsThrottled(t *testing.T) {
	o := collab(t, `  guardrails: {message_rate: 200}
  cues:
    - {id: F, agents: [a], inputs: {script: [{flood: 600}]}}
`, scriptAgent(t, "a", ""))
	rec := newMemRecorder()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	if len(rec.of(record.EvUserMessage)) != 600 {
		t.Errorf("%d of 600 messages recorded", len(rec.of(record.EvUserMessage)))
	}
	if len(rec.of(record.EvGuard)) == 0 {
		t.Error("no guard warning for the flood")
	}
}

// TestStatusReportFloodIsThrottled: status.report, the type agents report
// their state with, counts against message_rate as the other status.*
// messages do (issue 27, item 11); nothing is lost, so the last state
// reported is the one kept.
func TestStatusReportFloodIsThrottled(t *testing.T) {
	o := collab(t, `  guardrails: {message_rate: 100, loop_warn: 100000, loop_block: 100000}
  cues:
    - id: F
      agents: [a]
      inputs: {script: [{repeat: {times: 300, step: {report_status: {state: working, progress: 0.5, detail: busy}}}}, {report_status: {state: working, progress: 0.9, detail: last}}]}
`, scriptAgent(t, "a", ""))
	rec := newMemRecorder()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s: %s", res.State, res.Reason, reasonOf(rec, "F"))
	}
	if len(rec.of(record.EvGuard)) == 0 {
		t.Error("no guard warning for 301 status reports against a rate of 100/s")
	}
	reports := rec.of(record.EvAgentStatus)
	var last record.StatusData
	asData(reports[len(reports)-1].Data, &last)
	if len(reports) != 301 || last.Detail != "last" {
		t.Errorf("%d of 301 reports recorded, the last %+v", len(reports), last)
	}
}

// TestStoppedCueAnswerSparesTheSharedProcess: orch stop RUN CUE on one of
// two cues a jsonl process serves at once; the stopped handler still answers
// its GO (task.failed, as protocols/agent does when its ctx is cancelled)
// after orch stopped waiting. That late answer is dropped: the process goes
// on serving the other cue, which completes.
func TestStoppedCueAnswerSparesTheSharedProcess(t *testing.T) {
	o := collab(t, `  guardrails: {loop_warn: 1000000, loop_block: 1000000}   # B polls the blackboard
  cues:
    - {id: A, agents: [worker], inputs: {script: [{sleep: 60s}]}}
    - {id: B, agents: [worker], inputs: {script: [{await_key: go-on}, {output: {done: "yes"}}]}}
`, scriptAgent(t, "worker", "concurrency: 2"))
	rec := newMemRecorder()
	go func() {
		waitState := func(cue, state string) {
			for rec.cueStates()[cue] != state {
				time.Sleep(10 * time.Millisecond)
			}
		}
		waitState("A", "go")
		waitState("B", "go")
		rec.mu.Lock()
		runID := rec.events[0].RunID
		rec.commands = append(rec.commands, record.Command{ID: 1, RunID: runID, Kind: "stop", Cue: "A", Arg: "stopped by the test"})
		rec.mu.Unlock()
		waitState("A", "stopped")
		// The stopped handler's answer has come back by the time the
		// attempt's end is recorded plus a moment; B goes on after it.
		for len(rec.of(record.EvAttemptEnded)) < 1 {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		_, _ = rec.BlackboardWrite(context.Background(), runID, "go-on", json.RawMessage(`true`), "test")
	}()
	res := runCollab(t, o, rec, nil)
	if got := rec.cueStates()["A"]; got != "stopped" {
		t.Fatalf("A: %s (%s)", got, reasonOf(rec, "A"))
	}
	if got := outputsOf(t, rec, "B")["done"]; got != "yes" {
		t.Fatalf("B's outputs: %v", got)
	}
	if res.State != record.RunFailed || !strings.Contains(res.Reason, "stopped: A") {
		t.Errorf("run %s: %s", res.State, res.Reason)
	}
	for _, e := range rec.of(record.EvNote) {
		if strings.Contains(e.Reason, "answers no request") {
			t.Errorf("note: %s", e.Reason)
		}
	}
}
