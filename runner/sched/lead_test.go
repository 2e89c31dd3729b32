package sched_test

import (
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/sched"
)

// A cue with no dependencies gets its WARNING warning_lead before its GO
// (the cue's own, else the cuelist's default); WARNING says when GO is
// expected: at the end of the lead, or when the dependency in GO is
// expected to complete by its estimate.
func TestWarningLeadAndEstimatedGo(t *testing.T) {
	h := newHarness(t, "  defaults: {warning_lead: 30s}\n", `    - {id: A, agents: [a], estimate: 5m}
    - {id: B, agents: [b], dependencies: [A]}
    - {id: C, agents: [c], warning_lead: 10s}
`, plainAgents+"---\nagent: {id: c, command: [sh, -c, \"true\"]}\n", 4, false)
	starts := func() map[string]time.Time {
		h.core.Advance(h.now)
		out := map[string]time.Time{}
		for _, d := range h.core.Decisions() {
			h.log = append(h.log, h.render(d))
			if d.Kind == sched.StartAttempt {
				out[h.id(d.Cue)] = d.Until
			}
		}
		return out
	}
	h.core.Begin(h.now)
	got := starts()
	if !got["A"].Equal(t0.Add(30*time.Second)) || !got["C"].Equal(t0.Add(10*time.Second)) {
		t.Errorf("estimated GO %v", got)
	}
	if h.state("A") != sched.Warning || h.state("C") != sched.Warning {
		t.Fatalf("A %s, C %s: both wait in WARNING for their lead", h.state("A"), h.state("C"))
	}
	if _, why := h.core.State(h.pos("A")); why != "GO not before 03:04:35 (warning_lead 30s)" {
		t.Errorf("A's WARNING says %q", why)
	}
	if got := h.core.WakeAt(); !got.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("wake at +%s, want C's lead", got.Sub(t0))
	}
	h.now = t0.Add(10 * time.Second)
	h.core.Wake()
	h.want("C's lead is over", h.advance(), "C standby", "C go", "go C/0")
	h.now = t0.Add(30 * time.Second)
	h.core.Wake()
	got = starts()
	if h.state("A") != sched.Go || h.state("B") != sched.Warning {
		t.Fatalf("A %s, B %s", h.state("A"), h.state("B"))
	}
	if want := t0.Add(30*time.Second + 5*time.Minute); !got["B"].Equal(want) {
		t.Errorf("B is expected to go at %s, want A's GO plus its estimate (%s)", got["B"], want)
	}
	h.want("A completes: B goes at once (it has a dependency: no lead)", h.completed("A"),
		"ended A/0#1 completed ", "A completed", "B standby", "B go", "go B/0")
}
