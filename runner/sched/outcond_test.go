package sched_test

import (
	"testing"

	"github.com/orch-cli/orch/runner/sched"
)

// A condition CUE.key reads an output of an upstream cue (no blackboard):
// truthy goes on, falsy or missing skips the cue with why; a key whose
// name only looks like CUE.key (no such cue) is a blackboard key.
func TestOutputConditions(t *testing.T) {
	cues := `    - {id: TEST, agents: [a]}
    - {id: SHIP, agents: [b], dependencies: [TEST], conditions: [TEST.passed]}
`
	for _, tc := range []struct {
		name    string
		outputs map[string]any
		want    []string
	}{
		{"truthy", map[string]any{"passed": true}, []string{"ended TEST/0#1 completed ", "TEST completed", "SHIP standby", "SHIP go", "go SHIP/0"}},
		{"falsy", map[string]any{"passed": "no"}, []string{"ended TEST/0#1 completed ", "TEST completed", "stop SHIP/0: cue SHIP is skipped",
			`SHIP skipped: condition TEST.passed does not hold: "no"`}},
		{"missing", map[string]any{"other": 1}, []string{"ended TEST/0#1 completed ", "TEST completed", "stop SHIP/0: cue SHIP is skipped",
			"SHIP skipped: condition TEST.passed does not hold: cue TEST has no output passed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "", cues, plainAgents, 4, false)
			h.core.Begin(h.now)
			h.want("begin", h.advance(), "TEST warning", "start TEST/0#1 a", "TEST standby", "TEST go", "go TEST/0", "SHIP warning", "start SHIP/0#1 b")
			h.want("TEST completed", h.ended("TEST", sched.End{Outputs: tc.outputs}), tc.want...)
		})
	}
	h := newHarness(t, "", "    - {id: A, agents: [a], conditions: [NOPE.flag]}\n", plainAgents, 4, false)
	h.core.Begin(h.now)
	h.want("a dotted board key", h.advance(), "A warning", "start A/0#1 a", "stop A/0: cue A is skipped",
		"A skipped: condition NOPE.flag does not hold: no such key on the blackboard")
}
