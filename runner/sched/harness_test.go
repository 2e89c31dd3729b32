package sched_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/internal/testfs"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// harness drives a Core with a fake clock and renders what it decides as
// short lines ("A warning", "start A/0#1 ag", "go A/0", ...).
type harness struct {
	t     *testing.T
	plan  *planner.Plan
	core  *sched.Core
	now   time.Time
	board map[string]json.RawMessage
	cool  map[string]time.Time
	fail  error // Conditions fails with it
	log   []string
}

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// newHarness compiles a cuelist (cues: the YAML list of cues; agents: the
// agent documents) and starts a core over it with max_parallel parallel.
func newHarness(t *testing.T, head, cues, agents string, parallel int, canAsk bool) *harness {
	t.Helper()
	h := &harness{t: t, plan: compile(t, head, cues, agents), now: t0, board: map[string]json.RawMessage{}, cool: map[string]time.Time{}}
	h.core = sched.New(sched.Config{Plan: h.plan, RunID: "r1", Parallel: parallel, CanAsk: canAsk, Lookup: h,
		Trivial: func(a *spec.Agent) bool {
			return a.Protocol != "jsonl" && len(a.Prepare) == 0 && len(a.ReadyCheck) == 0
		},
		Jitter: func(n time.Duration) time.Duration { return n }}) // no jitter: the longest delay
	return h
}

func compile(t *testing.T, head, cues, agents string) *planner.Plan {
	t.Helper()
	dir := testfs.Write(t, map[string]string{
		"cuelist.yaml": "cuelist:\n  id: t\n  include: [agents.yaml]\n" + head + "  cues:\n" + cues,
		"agents.yaml":  agents,
	}, 0o755)
	_, p, diags, err := planner.Compile(filepath.Join(dir, "cuelist.yaml"), "", spec.LoadOptions{})
	if err != nil || p == nil {
		t.Fatalf("compile: %v\n%v", err, diags)
	}
	return p
}

func (h *harness) Conditions(cue string, keys []string) (map[string]json.RawMessage, error) {
	if h.fail != nil {
		return nil, h.fail
	}
	out := map[string]json.RawMessage{}
	for _, k := range keys {
		if v, ok := h.board[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

func (h *harness) CooldownUntil(agent string) time.Time { return h.cool[agent] }

func (h *harness) id(pos int) string { return h.core.Cue(pos).ID }

func (h *harness) pos(id string) int {
	p := h.core.Pos(id)
	if p < 0 {
		h.t.Fatalf("no cue %s", id)
	}
	return p
}

// take renders the decisions since the last take and appends them to log.
func (h *harness) take() []string {
	var out []string
	for _, d := range h.core.Decisions() {
		out = append(out, h.render(d))
	}
	h.log = append(h.log, out...)
	return out
}

func (h *harness) render(d sched.Decision) string {
	c := h.id(d.Cue)
	switch d.Kind {
	case sched.CueState:
		if d.Class != "" {
			return fmt.Sprintf("%s %s (%s): %s", c, d.State, d.Class, d.Reason)
		}
		if d.Reason != "" {
			return fmt.Sprintf("%s %s: %s", c, d.State, d.Reason)
		}
		return fmt.Sprintf("%s %s", c, d.State)
	case sched.StartAttempt:
		fb := ""
		if d.Fallback {
			fb = " (fallback)"
		}
		return fmt.Sprintf("start %s/%d#%d %s%s", c, d.Target, d.Attempt, d.Agent.ID, fb)
	case sched.SendStandby:
		return fmt.Sprintf("standby %s/%d", c, d.Target)
	case sched.SendGo:
		return fmt.Sprintf("go %s/%d", c, d.Target)
	case sched.StopAttempt:
		return fmt.Sprintf("stop %s/%d: %s", c, d.Target, d.Reason)
	case sched.AttemptEnded:
		return fmt.Sprintf("ended %s/%d#%d %s %s", c, d.Target, d.Attempt, d.AttemptState, d.Class)
	case sched.AttemptInterrupted:
		return fmt.Sprintf("interrupted %s#%d %s", c, d.Attempt, d.Key)
	case sched.Cooldown:
		return fmt.Sprintf("cooldown %s until +%s", d.Agent.ID, d.Until.Sub(h.now))
	case sched.Retry:
		if !d.Until.IsZero() {
			return fmt.Sprintf("retry %s %d of %d in %s (cooldown)", d.Agent.ID, d.N, d.Max, d.Delay)
		}
		return fmt.Sprintf("retry %s %d of %d in %s", d.Agent.ID, d.N, d.Max, d.Delay)
	case sched.Fallback:
		return fmt.Sprintf("fallback %s %s: %s", d.Agent.ID, d.Reason, d.To.ID)
	case sched.Export:
		return fmt.Sprintf("export %s=%v by %s", d.Key, d.Value, d.Agent.ID)
	case sched.Conflict:
		holders := make([]string, len(d.Holders))
		for i, p := range d.Holders {
			holders[i] = h.id(p)
		}
		return fmt.Sprintf("conflict %s waits for %s %s held by %s (capacity %d)", c, d.Subject.Kind, d.Subject.Name, strings.Join(holders, ","), d.Capacity)
	case sched.ManualGo:
		return fmt.Sprintf("manual go %s: %s", c, d.Reason)
	case sched.AskForGo:
		return fmt.Sprintf("ask %s", c)
	case sched.CooldownCleared:
		return fmt.Sprintf("cooldown %s cleared: %s", d.Agent.ID, d.Reason)
	case sched.Expand:
		restored := ""
		if d.Restored {
			restored = " (restored)"
		}
		if d.Reason != "" {
			restored += ": " + d.Reason
		}
		return fmt.Sprintf("expand %s into [%s]%s", c, strings.Join(d.Items, " "), restored)
	}
	return fmt.Sprintf("decision %d", d.Kind)
}

// attempt is the number of the attempt last started for the cue's target.
func (h *harness) attempt(cue string, target int) int {
	prefix := fmt.Sprintf("start %s/%d#", cue, target)
	n := 0
	for _, l := range h.log {
		if strings.HasPrefix(l, prefix) {
			fmt.Sscanf(strings.TrimPrefix(l, prefix), "%d", &n)
		}
	}
	if n == 0 {
		h.t.Fatalf("no attempt started for %s/%d in\n%s", cue, target, strings.Join(h.log, "\n"))
	}
	return n
}

func (h *harness) advance() []string { h.core.Advance(h.now); return h.take() }

func (h *harness) warned(cue string) []string {
	h.core.Warned(h.pos(cue), 0, h.attempt(cue, 0))
	return h.advanceAfter()
}

func (h *harness) ready(cue string) []string {
	h.core.Ready(h.pos(cue), 0, h.attempt(cue, 0))
	return h.advanceAfter()
}

func (h *harness) ended(cue string, e sched.End) []string {
	h.core.Ended(h.now, h.pos(cue), 0, h.attempt(cue, 0), e)
	return h.advanceAfter()
}

func (h *harness) completed(cue string) []string { return h.ended(cue, sched.End{}) }

// advanceAfter takes what an input decided, then what the advance after it
// decides (the loop's order).
func (h *harness) advanceAfter() []string {
	out := h.take()
	return append(out, h.advance()...)
}

// want checks that got is exactly want.
func (h *harness) want(step string, got []string, want ...string) {
	h.t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Errorf("%s decided:\n  %s\nwant:\n  %s", step, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func (h *harness) state(cue string) sched.State {
	s, _ := h.core.State(h.pos(cue))
	return s
}

const plainAgents = `agent: {id: a, command: [sh, -c, "true"]}
---
agent: {id: b, command: [sh, -c, "true"]}
`

// jsonl agents acknowledge WARNING and STANDBY themselves.
const protoAgents = `agent: {id: a, protocol: jsonl, command: [sh, -c, "true"]}
---
agent: {id: b, protocol: jsonl, command: [sh, -c, "true"]}
`
