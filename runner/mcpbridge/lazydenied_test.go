package mcpbridge

import (
	"slices"
	"testing"
)

// TestPolicyAskedAtFirstRequest: registering an attempt does not ask its
// task which tools it is denied (every attempt registers, as every process
// may call a tool; most never do): the first request does, and the denied
// tool is not listed.
func TestPolicyAskedAtFirstRequest(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("reviewer")
	task.denied["blackboard"] = "tools.deny"
	token, _ := e.Register("review/1", task)
	if n := task.policyAsked.Load(); n != 0 {
		t.Fatalf("Register asked the task's policy %d times, want none", n)
	}
	got := listed(t, connect(t, e, token, nil))
	if task.policyAsked.Load() == 0 {
		t.Error("the first request did not ask the task's policy")
	}
	if slices.Contains(got, "blackboard_write") || !slices.Contains(got, "ask") {
		t.Errorf("listed %v: blackboard_write is denied, ask is not", got)
	}
}
