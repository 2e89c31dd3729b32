package otelrun

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/orch-cli/orch/runner/record"
)

var t0 = time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)

func runEvent(typ string) record.Event {
	return record.Event{RunID: "r1", Type: typ, At: t0}
}

// recorded returns a tracer whose spans a SpanRecorder sees as they end,
// and which the SDK hands to an exporter that accepts them all.
func recorded(t *testing.T, cfg *Config) (*Tracer, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	out := &delivery{SpanExporter: tracetest.NewNoopExporter(), ready: true}
	return newTracer(cfg, "research", "dev", out, sdktrace.WithSpanProcessor(rec), sdktrace.WithSyncer(out)), rec
}

func ended(rec *tracetest.SpanRecorder) map[string]sdktrace.ReadOnlySpan {
	out := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		out[s.Name()] = s
	}
	return out
}

func attrOf(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value
		}
	}
	return attribute.Value{}
}

// A child task's span hangs under the attempt that handed off to it;
// usage lands on the attempt (GenAI attributes) and on the run (its
// totals); an attempt still running when orch exits is ended then; every
// span begins and ends at its events' times.
func TestTracerTasksAndUsage(t *testing.T) {
	tr, rec := recorded(t, &Config{Endpoint: "http://127.0.0.1:1/v1/traces"})
	at := func(e record.Event, d time.Duration) record.Event { e.At = t0.Add(d); return e }
	for _, e := range []record.Event{
		at(record.Event{Type: record.EvRunStarted}, 0),
		at(record.Event{Type: record.EvCueState, Cue: "R", State: "warning"}, 1),
		at(record.Event{Type: record.EvAttemptStarted, Cue: "R", Agent: "lead", Attempt: 1}, 2),
		at(record.Event{Type: record.EvUsage, Cue: "R", Agent: "lead", Attempt: 1,
			Data: record.UsageData{InputTokens: 10, OutputTokens: 5, CostUSD: 0.5, RunInputTokens: 10, RunCostUSD: 0.5}}, 3),
		at(record.Event{Type: record.EvTaskStarted, Cue: "R/1", Agent: "helper", Data: record.TaskStartedData{Parent: "R", Kind: "handoff"}}, 4),
		at(record.Event{Type: record.EvAttemptStarted, Cue: "R/1", Agent: "helper", Attempt: 1}, 5),
		at(record.Event{Type: record.EvAttemptEnded, Cue: "R/1", Agent: "helper", Attempt: 1, State: "failed", Reason: "boom"}, 6),
		at(record.Event{Type: record.EvCueState, Cue: "R/1", State: "failed", Reason: "boom"}, 7),
		at(record.Event{Type: record.EvNote, Cue: "R", Agent: "lead", Attempt: 1, Reason: "slow"}, 8),
	} {
		e.RunID = "r1"
		tr.Event(e)
	}
	spans := ended(rec)
	task, helper := spans["task R/1"], spans["invoke_agent helper"]
	if task == nil || helper == nil || len(spans) != 2 {
		t.Fatalf("ended before Finish: %v", spans)
	}
	if helper.Status().Code != codes.Error || helper.Status().Description != "boom" || task.Status().Code != codes.Error {
		t.Errorf("failed task: status %v, task %v", helper.Status(), task.Status())
	}
	if !helper.StartTime().Equal(t0.Add(5)) || !helper.EndTime().Equal(t0.Add(6)) {
		t.Errorf("helper's span %s..%s, want its events' times", helper.StartTime(), helper.EndTime())
	}

	if warn := tr.Finish(); warn != "" {
		t.Errorf("Finish: %s", warn)
	}
	spans = ended(rec)
	lead, run := spans["invoke_agent lead"], spans["run research"]
	if lead == nil || run == nil {
		t.Fatalf("after Finish: %v", spans)
	}
	if task.Parent().SpanID() != lead.SpanContext().SpanID() || helper.Parent().SpanID() != task.SpanContext().SpanID() {
		t.Errorf("task's parent %s (want the lead's attempt %s), helper's %s (want the task's %s)",
			task.Parent().SpanID(), lead.SpanContext().SpanID(), helper.Parent().SpanID(), task.SpanContext().SpanID())
	}
	if attrOf(lead, "gen_ai.usage.input_tokens").AsInt64() != 10 || attrOf(lead, "orch.cost_usd").AsFloat64() != 0.5 {
		t.Errorf("lead's usage attributes: %v", lead.Attributes())
	}
	if ev := lead.Events(); len(ev) != 2 || ev[0].Name != record.EvNote || ev[1].Name != "orch exited" {
		t.Errorf("the lead's events: %v, want its note and orch exited", ev)
	}
	if attrOf(lead, "orch.state").AsString() != "running" {
		t.Errorf("the attempt still running at the end: state %v", attrOf(lead, "orch.state"))
	}
	if attrOf(run, "orch.usage.input_tokens").AsInt64() != 10 || attrOf(run, "orch.cost_usd").AsFloat64() != 0.5 {
		t.Errorf("the run's usage: %v", run.Attributes())
	}
	if run.Parent().IsValid() || run.SpanContext().TraceID() != tr.traceID {
		t.Errorf("the run's span: parent %v, trace %s (want a root in %s)", run.Parent(), run.SpanContext().TraceID(), tr.traceID)
	}
}

// The attempt's span has the id its agent's TRACEPARENT named before it
// began, in orch's own trace when orch was started inside one (its
// TRACESTATE passed on); the run's span is then the child of orch's parent.
func TestAgentEnvNamesTheAttemptSpan(t *testing.T) {
	tr, rec := recorded(t, &Config{Endpoint: "http://127.0.0.1:1/v1/traces",
		Parent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", TraceState: "vendor=x"})
	env := tr.AgentEnv("BUILD", "builder", 2)
	tr.Event(record.Event{RunID: "r1", Type: record.EvRunStarted, At: t0})
	tr.Event(record.Event{RunID: "r1", Type: record.EvAttemptStarted, Cue: "BUILD", Agent: "builder", Attempt: 2, At: t0})
	tr.Event(record.Event{RunID: "r1", Type: record.EvAttemptEnded, Cue: "BUILD", Agent: "builder", Attempt: 2, State: "completed", At: t0})
	tr.Finish()
	spans := ended(rec)
	a, run := spans["invoke_agent builder"], spans["run research"]
	if a == nil || run == nil {
		t.Fatalf("spans: %v", spans)
	}
	want := []string{"TRACEPARENT=00-0af7651916cd43dd8448eb211c80319c-" + a.SpanContext().SpanID().String() + "-01", "TRACESTATE=vendor=x"}
	if strings.Join(env, " ") != strings.Join(want, " ") {
		t.Errorf("agent env %v, want %v", env, want)
	}
	if run.Parent().SpanID().String() != "b7ad6b7169203331" || !run.Parent().IsRemote() {
		t.Errorf("the run's parent %v, want orch's TRACEPARENT", run.Parent())
	}
	if a.Status().Code != codes.Ok {
		t.Errorf("completed attempt: status %v", a.Status())
	}
}

// A span keeps at most 128 events (the SDK's default limit, which
// OTEL_SPAN_EVENT_COUNT_LIMIT changes) and counts the others: a guard
// flood must not make a span of megabytes.
func TestSpanEventLimit(t *testing.T) {
	tr, rec := recorded(t, &Config{})
	tr.Event(runEvent(record.EvRunStarted)) // an event of the run's span too
	for range 132 {
		tr.Event(runEvent(record.EvGuard))
	}
	tr.Finish()
	run := ended(rec)["run research"]
	if run == nil {
		t.Fatal("no run span")
	}
	if len(run.Events()) != 128 || run.DroppedEvents() != 5 {
		t.Errorf("%d events and %d dropped, want 128 and 5", len(run.Events()), run.DroppedEvents())
	}
}

// A run the sampler drops (OTEL_TRACES_SAMPLER=always_off, or a parent
// that was not sampled) sends nothing, warns of nothing, and tells its
// agents so: their TRACEPARENT's flags are 00.
func TestSampledOutRun(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	out := &delivery{SpanExporter: tracetest.NewNoopExporter(), ready: true}
	tr := newTracer(&Config{}, "research", "dev", out, sdktrace.WithSpanProcessor(rec), sdktrace.WithSyncer(out),
		sdktrace.WithSampler(sdktrace.NeverSample()))
	tr.Event(runEvent(record.EvRunStarted))
	env := tr.AgentEnv("BUILD", "builder", 1)
	if len(env) != 1 || !strings.HasSuffix(env[0], "-00") {
		t.Errorf("agent env %v, want a TRACEPARENT with flags 00", env)
	}
	if warn := tr.Finish(); warn != "" || len(rec.Ended()) != 0 {
		t.Errorf("Finish: %q, %d spans ended", warn, len(rec.Ended()))
	}
}
