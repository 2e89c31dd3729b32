package otelrun

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner"
)

// Tracer builds one run's spans from its events and hands the finished ones
// to its exporter. A nil *Tracer does nothing.
//
// An attempt's span id is known before its process starts (TRACEPARENT is
// in the process's environment, and the runner shows the attempt's events
// only after launching it): it is derived from the attempt's cue, agent and
// number and a random seed of this tracer, so AgentEnv and Event agree
// without sharing any state. Every other span id is random.
type Tracer struct {
	exp     *exporter
	cuelist string
	traceID [16]byte
	parent  [8]byte // orch's own TRACEPARENT's span: the run span's parent
	state   string  // orch's own TRACESTATE, passed on
	seed    [16]byte

	mu          sync.Mutex
	run         *span
	runOpen     bool
	cues        map[string]*span     // open cue (and child task) spans by cue or task id
	attempts    map[attemptKey]*span // open attempt spans
	lastAttempt map[string][8]byte   // a cue's or task's latest attempt span: its child tasks' parent
	done        bool
}

type attemptKey struct {
	cue, agent string
	number     int
}

// New returns the tracer of a run of cuelist; nil when cfg is nil.
// version is orch's, for the instrumentation scope.
func New(cfg *Config, cuelist, version string) *Tracer {
	if cfg == nil {
		return nil
	}
	t := &Tracer{exp: newExporter(cfg, version), cuelist: cuelist, state: cfg.TraceState,
		cues: map[string]*span{}, attempts: map[attemptKey]*span{}, lastAttempt: map[string][8]byte{}}
	_, _ = rand.Read(t.seed[:])
	if tid, sid, ok := parseTraceparent(cfg.Parent); ok {
		t.traceID, t.parent = tid, sid
	} else {
		t.state = "" // a trace state belongs to its traceparent
		_, _ = rand.Read(t.traceID[:])
	}
	return t
}

// AgentEnv is the environment that makes an attempt's own spans children
// of its attempt span: TRACEPARENT, and TRACESTATE when orch was given one.
func (t *Tracer) AgentEnv(cue, agent string, attempt int) []string {
	if t == nil {
		return nil
	}
	id := t.attemptSpanID(attemptKey{cue, agent, attempt})
	env := []string{"TRACEPARENT=00-" + hex.EncodeToString(t.traceID[:]) + "-" + hex.EncodeToString(id[:]) + "-01"}
	if t.state != "" {
		env = append(env, "TRACESTATE="+t.state)
	}
	return env
}

func (t *Tracer) attemptSpanID(k attemptKey) [8]byte {
	h := sha256.New()
	h.Write(t.seed[:])
	fmt.Fprintf(h, "%s\x00%s\x00%d", k.cue, k.agent, k.number)
	var id [8]byte
	copy(id[:], h.Sum(nil))
	if id == ([8]byte{}) {
		id[7] = 1 // an all-zero span id is invalid
	}
	return id
}

// Event adds one of the run's events to its spans. Events are given in
// their log's order (the observer's calls are serialized); it never blocks
// on the network.
func (t *Tracer) Event(e runner.Event) {
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
	case runner.EvRunState:
		run.set("orch.state", e.State)
		run.addEvent(e.At, e.State, reasonAttr(e.Reason)...)
		if runner.RunState(e.State).Ended() && t.runOpen {
			t.end(run, e.At, e.State, e.Reason)
			// What comes after the run's end is still parented by its
			// span, and written to a copy nobody sends.
			t.run = &span{traceID: run.traceID, id: run.id}
			t.runOpen = false
		}
	case runner.EvTaskStarted:
		t.taskSpan(e)
	case runner.EvCueState:
		c := t.cueSpan(e)
		c.set("orch.state", e.State)
		c.addEvent(e.At, e.State, reasonAttr(e.Reason)...)
		if runner.CueState(e.State).Final() {
			t.end(c, e.At, e.State, e.Reason)
			delete(t.cues, e.Cue)
		}
	case runner.EvAttemptStarted:
		a := t.attemptSpan(e)
		if d, _ := e.Data.(runner.AttemptStartedData); d.Fallback {
			a.set("orch.fallback", true)
		}
	case runner.EvAttemptEnded:
		a := t.attemptSpan(e)
		if d, ok := e.Data.(runner.AttemptEndedData); ok {
			if d.Class != "" {
				a.set("orch.failure_class", d.Class)
			}
			if d.ExitCode != nil {
				a.set("orch.exit_code", *d.ExitCode)
			}
		}
		t.end(a, e.At, e.State, e.Reason)
		delete(t.attempts, attemptKey{e.Cue, e.Agent, e.Attempt})
	case runner.EvUsage:
		t.usage(e)
	case runner.EvMessage, runner.EvBlackboard, runner.EvCueSpecs, runner.EvUserMessage:
		// The protocol's traffic and bookkeeping: orch events has them.
	default:
		t.innermost(e).addEvent(e.At, e.Type, t.eventAttrs(e)...)
	}
}

// runSpan is the run's span, begun by the first event this process sees
// (run/started, or whatever a continued run records first).
func (t *Tracer) runSpan(e runner.Event) *span {
	if t.run == nil {
		t.run = &span{traceID: t.traceID, id: randomSpanID(), parent: t.parent, traceState: t.state,
			name: "run " + t.cuelist, kind: kindInternal, start: e.At}
		t.run.set("orch.run.id", e.RunID)
		t.run.set("orch.cuelist", t.cuelist)
		t.runOpen = true
	}
	return t.run
}

func (t *Tracer) cueSpan(e runner.Event) *span {
	if c, ok := t.cues[e.Cue]; ok {
		return c
	}
	c := t.newSpan("cue "+e.Cue, kindInternal, randomSpanID(), t.run.id, e.At)
	c.set("orch.run.id", e.RunID)
	c.set("orch.cue.id", e.Cue)
	t.cues[e.Cue] = c
	return c
}

// taskSpan begins a child task's span, under the attempt that handed off
// or spawned it (its parent's latest).
func (t *Tracer) taskSpan(e runner.Event) {
	d, _ := e.Data.(runner.TaskStartedData)
	parent, ok := t.lastAttempt[d.Parent]
	if !ok {
		parent = t.run.id
		if p, open := t.cues[d.Parent]; open {
			parent = p.id
		}
	}
	c := t.newSpan("task "+e.Cue, kindInternal, randomSpanID(), parent, e.At)
	c.set("orch.run.id", e.RunID)
	c.set("orch.cue.id", e.Cue)
	c.set("orch.task.kind", d.Kind)
	c.set("orch.task.parent", d.Parent)
	t.cues[e.Cue] = c
}

func (t *Tracer) attemptSpan(e runner.Event) *span {
	k := attemptKey{e.Cue, e.Agent, e.Attempt}
	if a, ok := t.attempts[k]; ok {
		return a
	}
	// The GenAI semantic conventions' agent invocation.
	a := t.newSpan("invoke_agent "+e.Agent, kindClient, t.attemptSpanID(k), t.cueSpan(e).id, e.At)
	a.set("orch.run.id", e.RunID)
	a.set("orch.cue.id", e.Cue)
	a.set("orch.agent.id", e.Agent)
	a.set("orch.attempt", e.Attempt)
	a.set("gen_ai.operation.name", "invoke_agent")
	a.set("gen_ai.agent.name", e.Agent)
	t.attempts[k] = a
	t.lastAttempt[e.Cue] = a.id
	return a
}

// usage puts an attempt's totals so far on its span, the run's on the run's.
func (t *Tracer) usage(e runner.Event) {
	d, ok := e.Data.(runner.UsageData)
	if !ok {
		return
	}
	if a, open := t.attempts[attemptKey{e.Cue, e.Agent, e.Attempt}]; open {
		setUsage(a, "gen_ai.usage.", d.InputTokens, d.OutputTokens, d.CostUSD, d.Credits)
	}
	setUsage(t.run, "orch.usage.", d.RunInputTokens, d.RunOutputTokens, d.RunCostUSD, d.RunTotal)
}

func setUsage(s *span, tokens string, in, out int64, cost, credits float64) {
	if in > 0 {
		s.set(tokens+"input_tokens", in)
	}
	if out > 0 {
		s.set(tokens+"output_tokens", out)
	}
	if cost > 0 {
		s.set("orch.cost_usd", cost)
	}
	if credits > 0 {
		s.set("orch.credits", credits)
	}
}

// innermost is the open span an event is about: its attempt's, its cue's,
// else the run's.
func (t *Tracer) innermost(e runner.Event) *span {
	if a, ok := t.attempts[attemptKey{e.Cue, e.Agent, e.Attempt}]; ok && e.Attempt > 0 {
		return a
	}
	if c, ok := t.cues[e.Cue]; ok {
		return c
	}
	return t.run
}

func (t *Tracer) eventAttrs(e runner.Event) []Attr {
	var attrs []Attr
	if e.Cue != "" {
		attrs = append(attrs, Attr{"orch.cue.id", e.Cue})
	}
	if e.Agent != "" {
		attrs = append(attrs, Attr{"orch.agent.id", e.Agent})
	}
	if e.State != "" {
		attrs = append(attrs, Attr{"orch.state", e.State})
	}
	if q, ok := e.Data.(runner.QuestionData); ok {
		attrs = append(attrs, Attr{"orch.question.id", q.ID}, Attr{"orch.question.to", q.To})
	}
	if a, ok := e.Data.(runner.AnswerData); ok {
		attrs = append(attrs, Attr{"orch.question.id", a.ID})
	}
	return append(attrs, reasonAttr(e.Reason)...)
}

func reasonAttr(reason string) []Attr {
	if reason == "" {
		return nil
	}
	return []Attr{{"orch.reason", reason}}
}

func (t *Tracer) newSpan(name string, kind int, id, parent [8]byte, start time.Time) *span {
	return &span{traceID: t.traceID, id: id, parent: parent, traceState: t.state, name: name, kind: kind, start: start}
}

// end ends a span in its final state: a failure is an error with its
// reason, a completion is ok, anything else (stopped, skipped, blocked,
// interrupted) leaves the status unset and says so in orch.state.
func (t *Tracer) end(s *span, at time.Time, state, reason string) {
	s.end = at
	s.set("orch.state", state)
	if reason != "" {
		s.set("orch.reason", reason)
	}
	switch state {
	case "failed":
		s.status, s.message = statusError, reason
		if reason == "" {
			s.message = "failed"
		}
	case "completed":
		s.status = statusOK
	}
	t.exp.add(s) // the exporter's now: nothing changes it any more
}

// Finish ends the spans still open (a paused run's, or when orch exits
// early) as of now, and sends what is left, waiting a bounded time. It
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
			a.addEvent(now, "orch exited")
			t.end(a, now, "running", "")
		}
		for _, c := range t.cues {
			c.addEvent(now, "orch exited")
			t.end(c, now, stateOf(c), "")
		}
		if t.run != nil && t.runOpen {
			t.end(t.run, now, stateOf(t.run), "")
		}
	}
	t.mu.Unlock()
	return t.exp.finish()
}

func stateOf(s *span) string {
	for _, a := range s.attrs {
		if a.Key == "orch.state" {
			v, _ := a.Value.(string)
			return v
		}
	}
	return ""
}

func randomSpanID() [8]byte {
	var id [8]byte
	for id == ([8]byte{}) {
		_, _ = rand.Read(id[:])
	}
	return id
}

// parseTraceparent reads a W3C traceparent: version-traceid-spanid-flags.
func parseTraceparent(s string) (trace [16]byte, span [8]byte, ok bool) {
	parts := strings.Split(strings.TrimSpace(s), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || len(parts[1]) != 32 || len(parts[2]) != 16 ||
		(parts[0] == "00" && len(parts) != 4) {
		return trace, span, false
	}
	if _, err := strconv.ParseUint(parts[0], 16, 8); err != nil {
		return trace, span, false
	}
	if _, err := hex.Decode(trace[:], []byte(parts[1])); err != nil || strings.ToLower(parts[1]) != parts[1] {
		return trace, span, false
	}
	if _, err := hex.Decode(span[:], []byte(parts[2])); err != nil || strings.ToLower(parts[2]) != parts[2] {
		return trace, span, false
	}
	return trace, span, trace != [16]byte{} && span != [8]byte{}
}
