package otelrun

import (
	"testing"
	"time"

	"github.com/orch-cli/orch/runner"
)

var t0 = time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)

func runEvent(typ string) runner.Event {
	return runner.Event{RunID: "r1", Type: typ, At: t0}
}

// finished returns the spans the tracer has ended, by name, without
// sending them (the exporter's first send is exportInterval away).
func finished(tr *Tracer) map[string]*span {
	tr.exp.mu.Lock()
	defer tr.exp.mu.Unlock()
	out := map[string]*span{}
	for _, s := range tr.exp.pending {
		out[s.name] = s
	}
	return out
}

func attrOf(s *span, key string) any {
	for _, a := range s.attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return nil
}

// A child task's span hangs under the attempt that handed off to it;
// usage lands on the attempt (GenAI attributes) and on the run (its
// totals); an attempt still running when orch exits is ended then.
func TestTracerTasksAndUsage(t *testing.T) {
	tr := New(&Config{URL: "http://127.0.0.1:1/v1/traces", Timeout: time.Second}, "research", "dev")
	defer tr.exp.cancel()
	at := func(e runner.Event, d time.Duration) runner.Event { e.At = t0.Add(d); return e }
	for _, e := range []runner.Event{
		at(runner.Event{Type: runner.EvRunStarted}, 0),
		at(runner.Event{Type: runner.EvCueState, Cue: "R", State: "warning"}, 1),
		at(runner.Event{Type: runner.EvAttemptStarted, Cue: "R", Agent: "lead", Attempt: 1}, 2),
		at(runner.Event{Type: runner.EvUsage, Cue: "R", Agent: "lead", Attempt: 1,
			Data: runner.UsageData{InputTokens: 10, OutputTokens: 5, CostUSD: 0.5, RunInputTokens: 10, RunCostUSD: 0.5}}, 3),
		at(runner.Event{Type: runner.EvTaskStarted, Cue: "R/1", Agent: "helper", Data: runner.TaskStartedData{Parent: "R", Kind: "handoff"}}, 4),
		at(runner.Event{Type: runner.EvAttemptStarted, Cue: "R/1", Agent: "helper", Attempt: 1}, 5),
		at(runner.Event{Type: runner.EvAttemptEnded, Cue: "R/1", Agent: "helper", Attempt: 1, State: "failed", Reason: "boom"}, 6),
		at(runner.Event{Type: runner.EvCueState, Cue: "R/1", State: "failed", Reason: "boom"}, 7),
		at(runner.Event{Type: runner.EvNote, Cue: "R", Agent: "lead", Attempt: 1, Reason: "slow"}, 8),
	} {
		e.RunID = "r1"
		tr.Event(e)
	}
	tr.mu.Lock()
	lead := tr.attempts[attemptKey{"R", "lead", 1}]
	tr.mu.Unlock()
	spans := finished(tr)
	task, helper := spans["task R/1"], spans["invoke_agent helper"]
	if task == nil || helper == nil || lead == nil {
		t.Fatalf("spans: %v, lead open: %v", spans, lead)
	}
	if task.parent != lead.id || helper.parent != task.id {
		t.Errorf("task's parent %x (want the lead's attempt %x), helper's %x (want the task's %x)", task.parent, lead.id, helper.parent, task.id)
	}
	if helper.status != statusError || helper.message != "boom" || task.status != statusError {
		t.Errorf("failed task: status %d %q, task %d", helper.status, helper.message, task.status)
	}
	if attrOf(lead, "gen_ai.usage.input_tokens") != int64(10) || attrOf(lead, "orch.cost_usd") != 0.5 {
		t.Errorf("lead's usage attributes: %v", lead.attrs)
	}
	if len(lead.events) != 1 || lead.events[0].name != runner.EvNote {
		t.Errorf("the lead's note is not an event of its span: %v", lead.events)
	}

	tr.Finish() // nobody listens: the warning is TestFinishIsBounded's
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if attrOf(lead, "orch.state") != "running" || lead.end.IsZero() {
		t.Errorf("the attempt still running at the end: state %v, end %v", attrOf(lead, "orch.state"), lead.end)
	}
	if attrOf(tr.run, "orch.usage.input_tokens") != int64(10) || attrOf(tr.run, "orch.cost_usd") != 0.5 {
		t.Errorf("the run's usage: %v", tr.run.attrs)
	}
}
