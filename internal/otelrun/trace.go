package otelrun

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/orch-cli/orch/runner/record"
)

// Tracer builds one run's spans from its events with the OpenTelemetry SDK,
// whose batch processor sends them. A nil *Tracer does nothing.
//
// An attempt's span id is known before its process starts (TRACEPARENT is
// in the process's environment, and the runner shows the attempt's events
// only after launching it): it is derived from the attempt's cue, agent and
// number and a random seed of this tracer, so AgentEnv and Event agree
// without sharing any state, and the SDK is handed it through its
// IDGenerator when the attempt's span starts. Every other span id is random.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	out      *delivery
	endpoint string
	cuelist  string
	parent   context.Context // the run span's parent: orch's own TRACEPARENT, or none
	traceID  trace.TraceID
	state    trace.TraceState // orch's own TRACESTATE, passed on
	seed     [16]byte
	dropped  atomic.Bool // the sampler dropped the run's span: its agents' TRACEPARENT says so

	mu          sync.Mutex
	run         *span
	runOpen     bool
	cues        map[string]*span             // open cue (and child task) spans by cue or task id
	attempts    map[attemptKey]*span         // open attempt spans
	lastAttempt map[string]trace.SpanContext // a cue's or task's latest attempt span: its child tasks' parent
	ended       int                          // spans ended that the sampler kept: what should reach the collector
	done        bool
}

// span is an SDK span and its orch.state, which Finish ends it with.
type span struct {
	trace.Span
	state string
}

func (s *span) setState(state string) {
	s.state = state
	s.SetAttributes(attribute.String("orch.state", state))
}

type attemptKey struct {
	cue, agent string
	number     int
}

// New returns the tracer of a run of cuelist; nil when cfg is nil, or when
// the exporter cannot be made (warnings say why). version is orch's, for
// the instrumentation scope. warnings are what the SDK said of the
// OTEL_* variables, to be said before the run.
func New(cfg *Config, cuelist, version string) (*Tracer, []string) {
	if cfg == nil {
		return nil, nil
	}
	out := &delivery{}
	quietSDK(out)
	exp, err := newExporter(cfg)
	res, resErr := newResource() // with what it could read when it fails
	warnings := out.setupDone()
	if err != nil {
		return nil, append(warnings, fmt.Sprintf("OpenTelemetry: %v: the run is not exported", err))
	}
	if resErr != nil {
		warnings = append(warnings, fmt.Sprintf("OpenTelemetry: resource: %v", resErr))
	}
	out.SpanExporter = exp
	return newTracer(cfg, cuelist, version, out, sdktrace.WithBatcher(out), sdktrace.WithResource(res)), warnings
}

// newTracer is New with the span processor and resource given (the tests
// give an in-memory exporter).
func newTracer(cfg *Config, cuelist, version string, out *delivery, opts ...sdktrace.TracerProviderOption) *Tracer {
	t := &Tracer{out: out, endpoint: cfg.Endpoint, cuelist: cuelist, parent: context.Background(),
		cues: map[string]*span{}, attempts: map[attemptKey]*span{}, lastAttempt: map[string]trace.SpanContext{}}
	_, _ = rand.Read(t.seed[:])
	carrier := propagation.MapCarrier{"traceparent": cfg.Parent, "tracestate": cfg.TraceState}
	parent := propagation.TraceContext{}.Extract(context.Background(), carrier)
	if sc := trace.SpanContextFromContext(parent); sc.IsValid() {
		t.parent, t.traceID, t.state = parent, sc.TraceID(), sc.TraceState()
	} else {
		for !t.traceID.IsValid() {
			_, _ = rand.Read(t.traceID[:])
		}
	}
	opts = append(opts, sdktrace.WithIDGenerator(ids{t.traceID}))
	t.provider = sdktrace.NewTracerProvider(opts...)
	t.tracer = t.provider.Tracer("github.com/orch-cli/orch", trace.WithInstrumentationVersion(version))
	return t
}

// ids is the tracer's IDGenerator: the run's trace id for its root span,
// and the span id a context carries (an attempt's), else a random one.
type ids struct{ traceID trace.TraceID }

type presetSpanID struct{}

func (g ids) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	return g.traceID, g.NewSpanID(ctx, g.traceID)
}

func (ids) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if id, ok := ctx.Value(presetSpanID{}).(trace.SpanID); ok {
		return id
	}
	var id trace.SpanID
	for !id.IsValid() {
		_, _ = rand.Read(id[:])
	}
	return id
}

// AgentEnv is the environment that makes an attempt's own spans children
// of its attempt span: TRACEPARENT, and TRACESTATE when orch was given one.
func (t *Tracer) AgentEnv(cue, agent string, attempt int) []string {
	if t == nil {
		return nil
	}
	flags := trace.FlagsSampled
	if t.dropped.Load() {
		flags = 0 // the agent's spans go with the run's
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: t.traceID, SpanID: t.attemptSpanID(attemptKey{cue, agent, attempt}),
		TraceFlags: flags, TraceState: t.state})
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	env := []string{"TRACEPARENT=" + carrier.Get("traceparent")}
	if ts := carrier.Get("tracestate"); ts != "" {
		env = append(env, "TRACESTATE="+ts)
	}
	return env
}

func (t *Tracer) attemptSpanID(k attemptKey) trace.SpanID {
	h := sha256.New()
	h.Write(t.seed[:])
	fmt.Fprintf(h, "%s\x00%s\x00%d", k.cue, k.agent, k.number)
	var id trace.SpanID
	copy(id[:], h.Sum(nil))
	if !id.IsValid() {
		id[7] = 1 // an all-zero span id is invalid
	}
	return id
}

// Event adds one of the run's events to its spans. Events are given in
// their log's order (the observer's calls are serialized); it never blocks
// on the network.
func (t *Tracer) Event(e record.Event) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	run := t.runSpan(e)
	switch e.Type {
	case record.EvRunState:
		run.setState(e.State)
		run.AddEvent(e.State, at(e.At), trace.WithAttributes(reasonAttr(e.Reason)...))
		if record.RunState(e.State).Ended() && t.runOpen {
			// What comes after the run's end is still parented by its
			// span, which takes no more attributes or events.
			t.end(run, e.At, e.State, e.Reason)
			t.runOpen = false
		}
	case record.EvTaskStarted:
		t.taskSpan(e)
	case record.EvCueState:
		c := t.cueSpan(e)
		c.setState(e.State)
		c.AddEvent(e.State, at(e.At), trace.WithAttributes(reasonAttr(e.Reason)...))
		if record.CueState(e.State).Final() {
			t.end(c, e.At, e.State, e.Reason)
			delete(t.cues, e.Cue)
		}
	case record.EvAttemptStarted:
		a := t.attemptSpan(e)
		if d, _ := e.Data.(record.AttemptStartedData); d.Fallback {
			a.SetAttributes(attribute.Bool("orch.fallback", true))
		}
	case record.EvAttemptEnded:
		a := t.attemptSpan(e)
		if d, ok := e.Data.(record.AttemptEndedData); ok {
			if d.Class != "" {
				a.SetAttributes(attribute.String("orch.failure_class", d.Class))
			}
			if d.ExitCode != nil {
				a.SetAttributes(attribute.Int("orch.exit_code", *d.ExitCode))
			}
		}
		t.end(a, e.At, e.State, e.Reason)
		delete(t.attempts, attemptKey{e.Cue, e.Agent, e.Attempt})
	case record.EvUsage:
		t.usage(e)
	case record.EvMessage, record.EvBlackboard, record.EvCueSpecs, record.EvUserMessage:
		// The protocol's traffic and bookkeeping: orch events has them.
	default:
		t.innermost(e).AddEvent(e.Type, at(e.At), trace.WithAttributes(t.eventAttrs(e)...))
	}
}

func at(when time.Time) trace.EventOption { return trace.WithTimestamp(when) }

// start begins a span at a recorded time, under parent.
func (t *Tracer) start(parent context.Context, name string, kind trace.SpanKind, when time.Time, attrs ...attribute.KeyValue) *span {
	_, s := t.tracer.Start(parent, name, trace.WithTimestamp(when), trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return &span{Span: s}
}

func under(s trace.SpanContext) context.Context {
	return trace.ContextWithSpanContext(context.Background(), s)
}

// runSpan is the run's span, begun by the first event this process sees
// (run/started, or whatever a continued run records first).
func (t *Tracer) runSpan(e record.Event) *span {
	if t.run == nil {
		t.run = t.start(t.parent, "run "+t.cuelist, trace.SpanKindInternal, e.At,
			attribute.String("orch.run.id", e.RunID), attribute.String("orch.cuelist", t.cuelist))
		t.runOpen = true
		t.dropped.Store(!t.run.SpanContext().IsSampled())
	}
	return t.run
}

func (t *Tracer) cueSpan(e record.Event) *span {
	if c, ok := t.cues[e.Cue]; ok {
		return c
	}
	c := t.start(under(t.run.SpanContext()), "cue "+e.Cue, trace.SpanKindInternal, e.At,
		attribute.String("orch.run.id", e.RunID), attribute.String("orch.cue.id", e.Cue))
	t.cues[e.Cue] = c
	return c
}

// taskSpan begins a child task's span, under the attempt that handed off
// or spawned it (its parent's latest).
func (t *Tracer) taskSpan(e record.Event) {
	d, _ := e.Data.(record.TaskStartedData)
	parent, ok := t.lastAttempt[d.Parent]
	if !ok {
		parent = t.run.SpanContext()
		if p, open := t.cues[d.Parent]; open {
			parent = p.SpanContext()
		}
	}
	t.cues[e.Cue] = t.start(under(parent), "task "+e.Cue, trace.SpanKindInternal, e.At,
		attribute.String("orch.run.id", e.RunID), attribute.String("orch.cue.id", e.Cue),
		attribute.String("orch.task.kind", d.Kind), attribute.String("orch.task.parent", d.Parent))
}

func (t *Tracer) attemptSpan(e record.Event) *span {
	k := attemptKey{e.Cue, e.Agent, e.Attempt}
	if a, ok := t.attempts[k]; ok {
		return a
	}
	// The GenAI semantic conventions' agent invocation, with the span id
	// its agent's TRACEPARENT already named.
	parent := context.WithValue(under(t.cueSpan(e).SpanContext()), presetSpanID{}, t.attemptSpanID(k))
	a := t.start(parent, "invoke_agent "+e.Agent, trace.SpanKindClient, e.At,
		attribute.String("orch.run.id", e.RunID), attribute.String("orch.cue.id", e.Cue),
		attribute.String("orch.agent.id", e.Agent), attribute.Int("orch.attempt", e.Attempt),
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", e.Agent))
	t.attempts[k] = a
	t.lastAttempt[e.Cue] = a.SpanContext()
	return a
}

// usage puts an attempt's totals so far on its span, the run's on the run's.
func (t *Tracer) usage(e record.Event) {
	d, ok := e.Data.(record.UsageData)
	if !ok {
		return
	}
	if a, open := t.attempts[attemptKey{e.Cue, e.Agent, e.Attempt}]; open {
		a.SetAttributes(usageAttrs("gen_ai.usage.", d.InputTokens, d.OutputTokens, d.CostUSD, d.Credits)...)
	}
	t.run.SetAttributes(usageAttrs("orch.usage.", d.RunInputTokens, d.RunOutputTokens, d.RunCostUSD, d.RunTotal)...)
}

func usageAttrs(tokens string, in, out int64, cost, credits float64) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if in > 0 {
		attrs = append(attrs, attribute.Int64(tokens+"input_tokens", in))
	}
	if out > 0 {
		attrs = append(attrs, attribute.Int64(tokens+"output_tokens", out))
	}
	if cost > 0 {
		attrs = append(attrs, attribute.Float64("orch.cost_usd", cost))
	}
	if credits > 0 {
		attrs = append(attrs, attribute.Float64("orch.credits", credits))
	}
	return attrs
}

// innermost is the open span an event is about: its attempt's, its cue's,
// else the run's.
func (t *Tracer) innermost(e record.Event) *span {
	if a, ok := t.attempts[attemptKey{e.Cue, e.Agent, e.Attempt}]; ok && e.Attempt > 0 {
		return a
	}
	if c, ok := t.cues[e.Cue]; ok {
		return c
	}
	return t.run
}

func (t *Tracer) eventAttrs(e record.Event) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if e.Cue != "" {
		attrs = append(attrs, attribute.String("orch.cue.id", e.Cue))
	}
	if e.Agent != "" {
		attrs = append(attrs, attribute.String("orch.agent.id", e.Agent))
	}
	if e.State != "" {
		attrs = append(attrs, attribute.String("orch.state", e.State))
	}
	if q, ok := e.Data.(record.QuestionData); ok {
		attrs = append(attrs, attribute.String("orch.question.id", q.ID), attribute.String("orch.question.to", q.To))
	}
	if a, ok := e.Data.(record.AnswerData); ok {
		attrs = append(attrs, attribute.String("orch.question.id", a.ID))
	}
	return append(attrs, reasonAttr(e.Reason)...)
}

func reasonAttr(reason string) []attribute.KeyValue {
	if reason == "" {
		return nil
	}
	return []attribute.KeyValue{attribute.String("orch.reason", reason)}
}

// end ends a span in its final state: a failure is an error with its
// reason, a completion is ok, anything else (stopped, skipped, blocked,
// interrupted) leaves the status unset and says so in orch.state.
func (t *Tracer) end(s *span, when time.Time, state, reason string) {
	s.setState(state)
	if reason != "" {
		s.SetAttributes(attribute.String("orch.reason", reason))
	}
	switch state {
	case "failed":
		msg := reason
		if msg == "" {
			msg = "failed"
		}
		s.SetStatus(codes.Error, msg)
	case "completed":
		s.SetStatus(codes.Ok, "")
	}
	if s.IsRecording() && s.SpanContext().IsSampled() {
		t.ended++
	}
	s.End(trace.WithTimestamp(when)) // the batch processor's now
}

// Finish ends the spans still open (a paused run's, or when orch exits
// early) as of now, and sends what is left, waiting at most exportWait. It
// returns a warning for the person when spans could not be sent.
func (t *Tracer) Finish() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	if !t.done {
		t.done = true
		now := time.Now()
		for _, a := range t.attempts {
			a.AddEvent("orch exited", at(now))
			t.end(a, now, "running", "")
		}
		for _, c := range t.cues {
			c.AddEvent("orch exited", at(now))
			t.end(c, now, c.state, "")
		}
		if t.run != nil && t.runOpen {
			t.end(t.run, now, t.run.state, "")
		}
	}
	ended := t.ended
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), exportWait)
	defer cancel()
	err := t.provider.Shutdown(ctx)
	gaveUp := errors.Is(err, context.DeadlineExceeded)
	if err != nil && !gaveUp {
		t.out.note(err)
	}
	return t.out.report(ended, t.endpoint, gaveUp)
}
