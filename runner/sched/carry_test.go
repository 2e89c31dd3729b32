package sched_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/sched"
)

// Held, no cue goes into WARNING while the attempts running go on; the run
// is quiet once they end; Release lets the held cues go.
func TestHoldThenRelease(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: B, agents: [b], dependencies: [A]}
    - {id: C, agents: [a], dependencies: [B]}
`, plainAgents, 2, false)
	h.core.Begin(h.now)
	h.advance() // A in GO, B prepared beside it
	h.core.Hold()
	if h.core.Quiet() {
		t.Fatal("quiet with A in GO")
	}
	h.want("A completes, B goes, C held", h.completed("A"), "ended A/0#1 completed ", "A completed", "B standby", "B go", "go B/0")
	h.want("B completes", h.completed("B"), "ended B/0#1 completed ", "B completed")
	if got := h.advanceAfter(); len(got) != 0 {
		t.Fatalf("held, the core decided %v", got)
	}
	if !h.core.Quiet() {
		t.Fatal("not quiet: nothing runs, C pending")
	}
	h.core.Release()
	h.want("released", h.advanceAfter(), "C warning", "start C/0#1 a", "C standby", "C go", "go C/0")
}

// A core carried at a quiet point (through JSON, as a workflow's input)
// and resumed decides nothing by itself and goes on as the first would
// have: an interrupted cue still waits for orch go, its attempt numbers go
// on, a cue completed stays so, and a cue behind a fallback keeps it.
func TestCarryResume(t *testing.T) {
	const agents = `agent: {id: a, command: [sh, -c, "true"]}
---
agent: {id: b, command: [sh, -c, "true"], fallback: [c]}
---
agent: {id: c, command: [sh, -c, "true"]}
`
	const cues = `    - {id: A, agents: [a], idempotent: false}
    - {id: B, agents: [b]}
    - {id: C, agents: [a], dependencies: [A]}
`
	h := newHarness(t, "", cues, agents, 1, false)
	h.core.Begin(h.now)
	h.advance()
	h.core.Interrupt(h.pos("A"), 0, h.attempt("A", 0), "its worker was lost")
	h.advanceAfter()
	h.ended("B", sched.End{Failed: true, Class: "failed", Reason: "exit 1"}) // b has no retries: its fallback c next
	h.advanceAfter()
	h.want("c completes B", h.completed("B"), "ended B/0#2 completed ", "B completed")
	h.advanceAfter()
	k := carried(t, h, "not quiet: A interrupted, B completed, C pending")

	n := newHarness(t, "", cues, agents, 1, false)
	n.core.Resume(k)
	n.core.Begin(n.now)
	if got := n.advance(); len(got) != 0 {
		t.Fatalf("resumed, the core decided %v", got)
	}
	if n.state("B") != sched.Completed || n.state("A") != sched.Interrupted || n.state("C") != sched.Pending {
		t.Fatalf("resumed states A %s, B %s, C %s", n.state("A"), n.state("B"), n.state("C"))
	}
	if w := n.core.Waiting(); !reflect.DeepEqual(w, []string{"A"}) || !n.core.Stuck(0) {
		t.Fatalf("waiting %v, stuck %v: want A waiting for orch go", w, n.core.Stuck(0))
	}
	n.core.Approve("A", "orch go")
	n.want("orch go", n.advanceAfter(), "manual go A: orch go", "A pending: orch go: run it again",
		"A warning", "start A/0#2 a", "A standby", "A go", "go A/0", "C warning", "start C/0#1 a")
}

// A merge done at a cue whose GO was then interrupted is carried: the
// resumed core has its commit for the cue's next attempt, and orch go
// starts that attempt without merging again.
func TestCarryResumeMerge(t *testing.T) {
	cues := `    - {id: A, agents: [a]}
    - {id: B, agents: [b]}
    - {id: C, agents: [c], dependencies: [B, A], idempotent: false}
`
	h := newHarness(t, "", cues, worktreeAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.done("A", "oa", "ca")
	h.done("B", "ob", "cb")
	h.merged("C", 2, sched.MergeReport{Commit: "cm"})
	h.core.Interrupt(h.pos("C"), 0, h.attempt("C", 0), "its worker was lost")
	h.mtake()
	k := carried(t, h, "not quiet: A and B completed, C interrupted")
	n := newHarness(t, "", cues, worktreeAgents, 4, false)
	n.core.Resume(k)
	n.core.Begin(n.now)
	if got := n.advance(); len(got) != 0 {
		t.Fatalf("resumed, the core decided %v", got)
	}
	if commit, tasks, ok := n.core.MergeCommit(n.pos("C")); !ok || commit != "cm" || strings.Join(tasks, " ") != "A B" {
		t.Fatalf("resumed, C's merge: %q %v %v", commit, tasks, ok)
	}
	n.core.Approve("C", "orch go")
	n.want("orch go", n.mtake(), "manual go C: orch go", "C pending: orch go: run it again",
		"C warning", "start C/0#3 c", "C standby", "C go", "go C/0")
}

// carried holds h's core, which must then be quiet (else: notQuiet), and
// carries it through JSON, as a workflow's input.
func carried(t *testing.T, h *harness, notQuiet string) sched.Carried {
	t.Helper()
	h.core.Hold()
	if !h.core.Quiet() {
		t.Fatal(notQuiet)
	}
	b, err := json.Marshal(h.core.Carry())
	if err != nil {
		t.Fatal(err)
	}
	var k sched.Carried
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	return k
}
