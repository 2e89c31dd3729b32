package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/spec"
)

// plan loads one YAML stream and plans its cuelist; the spec must be valid.
func plan(t *testing.T, yaml string) *Plan {
	t.Helper()
	p, diags := planDiags(t, yaml)
	if diags.HasErrors() {
		t.Fatalf("diagnostics: %v", diags)
	}
	return p
}

func planDiags(t *testing.T, yaml string) (*Plan, spec.Diagnostics) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	set, diags, err := spec.Load([]string{path}, spec.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	diags = append(diags, spec.Check(set, spec.CheckOptions{})...)
	if diags.HasErrors() {
		t.Fatalf("spec diagnostics: %v", diags)
	}
	p, more := Build(set, set.Cuelists[0])
	return p, append(diags, more...)
}

// conflictLines renders decisions compactly: "resource db: A>B ordered".
func conflictLines(p *Plan) []string {
	var out []string
	for _, c := range p.Conflicts {
		var ids []string
		for _, cue := range c.Cues {
			ids = append(ids, cue.ID)
		}
		sep := ","
		if c.Winner != nil {
			sep = ">"
		}
		line := c.Type + " " + c.Subject + ": " + strings.Join(ids, sep)
		if c.Ordered {
			line += " ordered"
		}
		out = append(out, line)
	}
	return out
}

const agentsYAML = `
agent: {id: a, command: [x], priority: 1}
---
agent: {id: b, command: [x], priority: 5}
---
agent: {id: two, command: [x], concurrency: 2}
---
agent: {id: solo, command: [x]}
---
agent: {id: many, command: [x], concurrency: 100}
---
`

func TestConflicts(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"resource by cue priority", `
  arbitration: priority
  resources: {db: 1}
  cues:
    - {id: LOW, agents: [many], claims: [db], priority: 1}
    - {id: HIGH, agents: [many], claims: [db], priority: 9}`,
			[]string{"resource db: HIGH>LOW ordered"}},
		{"priority from agents when the cue has none", `
  resources: {db: 1}
  cues:
    - {id: A, agents: [a], claims: [db]}
    - {id: B, agents: [b], claims: [db]}`,
			[]string{"resource db: B>A ordered"}},
		{"priority tie: file order", `
  resources: {db: 1}
  cues:
    - {id: FIRST, agents: [many], claims: [db]}
    - {id: SECOND, agents: [many], claims: [db]}`,
			[]string{"resource db: FIRST>SECOND ordered"}},
		{"ordered cues do not conflict", `
  resources: {db: 1}
  cues:
    - {id: A, agents: [many], claims: [db]}
    - {id: B, agents: [many], claims: [db], dependencies: [A]}`,
			nil},
		{"capacity 2, three claimers: one ordering", `
  resources: {gpu: 2}
  cues:
    - {id: A, agents: [many], claims: [gpu], priority: 3}
    - {id: B, agents: [many], claims: [gpu], priority: 2}
    - {id: C, agents: [many], claims: [gpu], priority: 1}`,
			[]string{"resource gpu: A>C ordered"}},
		{"capacity 2, two claimers: no conflict", `
  resources: {gpu: 2}
  cues:
    - {id: A, agents: [many], claims: [gpu]}
    - {id: B, agents: [many], claims: [gpu]}`,
			nil},
		{"timing: a one-at-a-time agent", `
  cues:
    - {id: A, agents: [solo], priority: 1}
    - {id: B, agents: [solo], priority: 2}`,
			[]string{"timing solo: B>A ordered"}},
		{"timing: concurrency 2 takes two", `
  cues:
    - {id: A, agents: [two]}
    - {id: B, agents: [two]}`,
			nil},
		{"timing: concurrency 2, three cues", `
  cues:
    - {id: A, agents: [two]}
    - {id: B, agents: [two]}
    - {id: C, agents: [two]}`,
			[]string{"timing two: A>C ordered"}},
		{"output", `
  cues:
    - {id: A, agents: [many], outputs: [dist/app.tar]}
    - {id: B, agents: [many], outputs: [dist/app.tar]}`,
			[]string{"output dist/app.tar: A>B ordered"}},
		{"fcfs: recorded, no edge", `
  arbitration: fcfs
  resources: {db: 1}
  cues:
    - {id: A, agents: [many], claims: [db], priority: 1}
    - {id: B, agents: [many], claims: [db], priority: 9}
    - {id: C, agents: [many], claims: [db], dependencies: [A, B]}`,
			[]string{"resource db: A,B"}},
		{"orchestrator: longer remaining path first", `
  arbitration: orchestrator
  resources: {db: 1}
  cues:
    - {id: SHORT, agents: [many], claims: [db], priority: 9, estimate: 1m}
    - {id: LONG, agents: [many], claims: [db], priority: 1, estimate: 1m}
    - {id: TAIL, agents: [many], dependencies: [LONG], estimate: 10m}`,
			[]string{"resource db: LONG>SHORT ordered"}},
		{"orchestrator tie: priority", `
  arbitration: orchestrator
  resources: {db: 1}
  cues:
    - {id: A, agents: [many], claims: [db], priority: 1, estimate: 2m}
    - {id: B, agents: [many], claims: [db], priority: 9, estimate: 2m}`,
			[]string{"resource db: B>A ordered"}},
		{"orchestrator tie: file order", `
  arbitration: orchestrator
  resources: {db: 1}
  cues:
    - {id: A, agents: [many], claims: [db], estimate: 2m}
    - {id: B, agents: [many], claims: [db], estimate: 2m}`,
			[]string{"resource db: A>B ordered"}},
		{"three on capacity 1 make a chain", `
  resources: {db: 1}
  cues:
    - {id: A, agents: [many], claims: [db], priority: 1}
    - {id: B, agents: [many], claims: [db], priority: 3}
    - {id: C, agents: [many], claims: [db], priority: 2}`,
			[]string{"resource db: B>C ordered", "resource db: C>A ordered"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plan(t, agentsYAML+"cuelist:\n  id: t"+tt.body+"\n")
			if got := conflictLines(p); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("conflicts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, c := range p.Conflicts {
				if c.Reason == "" || len(c.Agents) == 0 || c.Strategy == "" {
					t.Errorf("incomplete decision %+v", c)
				}
			}
		})
	}
}

// TestEdgeWouldCreateCycle: X has the higher priority, but an earlier decision
// (W before Z on r1) already puts Y before X (Y -> W -> Z -> X). The edge
// X -> Y would close a cycle, so the other order stands and the reason says so.
func TestEdgeWouldCreateCycle(t *testing.T) {
	p := plan(t, agentsYAML+`cuelist:
  id: t
  resources: {r1: 1, r2: 1}
  cues:
    - {id: X, agents: [many], claims: [r2], priority: 9, dependencies: [Z]}
    - {id: Y, agents: [many], claims: [r2], priority: 1}
    - {id: W, agents: [many], claims: [r1], priority: 8, dependencies: [Y]}
    - {id: Z, agents: [many], claims: [r1], priority: 2}
`)
	got := conflictLines(p)
	want := []string{"resource r1: W>Z ordered", "resource r2: Y>X"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("conflicts %v, want %v", got, want)
	}
	if r := p.Conflicts[1].Reason; !strings.Contains(r, "already ordered by earlier decisions") {
		t.Errorf("reason %q does not explain the other order", r)
	}
	if _, ok := newAdjacencyOrder(t, p); !ok {
		t.Fatal("the final graph has a cycle")
	}
}

func newAdjacencyOrder(t *testing.T, p *Plan) ([]int, bool) {
	adj, err := newAdjacency(p)
	if err != nil {
		t.Fatal(err)
	}
	return adj.kahn(func(x, y int) bool { return x < y })
}

func TestUnresolvable(t *testing.T) {
	_, diags := planDiags(t, agentsYAML+`cuelist:
  id: t
  resources: {db: 1, gpu: 2}
  cues:
    - {id: A, agents: [solo, solo], claims: [db, db, gpu, gpu]}
`)
	var got []string
	for _, d := range diags.Sorted() {
		got = append(got, d.String())
	}
	if len(got) != 2 || !strings.Contains(got[1], `:16:50: error: cue A needs resource "db" 2 times at once, but its capacity is 1: no ordering can resolve this [unresolvable-conflict]`) ||
		!strings.Contains(got[0], `:16:30: error: cue A needs agent "solo" 2 times at once, but it serves 1 cue(s) at a time (concurrency)`) {
		t.Errorf("diagnostics:\n%s", strings.Join(got, "\n"))
	}
}

func TestOrderWavesCritical(t *testing.T) {
	p := plan(t, agentsYAML+`cuelist:
  id: t
  cues:
    - {id: D, agents: [many], estimate: 1m}
    - {id: A, agents: [many], estimate: 2m, auto_follow: B}
    - {id: B, agents: [many], estimate: 3m}
    - {id: C, agents: [many], dependencies: [D], estimate: 1m}
    - {id: E, agents: [many], dependencies: [B, C]}
`)
	var order []string
	for _, c := range p.Order {
		order = append(order, c.ID)
	}
	if got := strings.Join(order, " "); got != "D A B C E" {
		t.Errorf("order %s", got)
	}
	var waves []string
	for _, w := range p.Waves {
		var ids []string
		for _, c := range w {
			ids = append(ids, c.ID)
		}
		waves = append(waves, strings.Join(ids, ","))
	}
	if got := strings.Join(waves, " | "); got != "D,A | B,C | E" {
		t.Errorf("waves %s", got)
	}
	var crit []string
	for _, c := range p.Critical.Cues {
		crit = append(crit, c.ID)
	}
	if got := strings.Join(crit, " -> "); got != "A -> B -> E" || p.Critical.Length.String() != "6m0s" {
		t.Errorf("critical path %s (%s)", got, p.Critical.Length)
	}
	if !p.Reaches(p.ByID["A"], p.ByID["E"]) || !p.Concurrent(p.ByID["A"], p.ByID["D"]) || p.Concurrent(p.ByID["D"], p.ByID["E"]) {
		t.Error("reachability is wrong")
	}
	if got := len(p.Ancestors(p.ByID["E"])); got != 4 {
		t.Errorf("E has %d ancestors, want 4", got)
	}
	if p.ByID["B"].FollowsOf != p.ByID["A"] {
		t.Error("B should be started by A's auto_follow")
	}
}

func TestTools(t *testing.T) {
	p, diags := planDiags(t, `
agent: {id: researcher, command: [x], handoff_to: [open], tools: {allow: ["group:web", "group:fs", blackboard, handoff, spawn, gateway]}}
---
agent: {id: open, command: [x], tools: {deny: [memory, "group:nope"]}}
---
cuelist:
  id: t
  tool_groups: {web: [web_search, web_fetch], fs: [read_file, write_file]}
  tools: {deny: [gateway]}
  guardrails: {max_handoff_depth: 2, deny_at_depth: {"1": [spawn], "2": ["group:fs"]}}
  cues:
    - {id: A, agents: [researcher, open]}
`)
	byAgent := map[string]AgentTools{}
	for _, at := range p.Tools {
		byAgent[at.Agent] = at
	}
	r := byAgent["researcher"]
	if got := strings.Join(r.At(0), " "); got != "blackboard handoff read_file spawn web_fetch web_search write_file" {
		t.Errorf("researcher depth 0: %s", got)
	}
	if got := strings.Join(r.At(1), " "); got != "blackboard handoff read_file web_fetch web_search write_file" {
		t.Errorf("researcher depth 1: %s", got)
	}
	if got := strings.Join(r.At(5), " "); got != "blackboard handoff web_fetch web_search" {
		t.Errorf("researcher depth 2+: %s", got)
	}
	if r.Allows("gateway", 0) || !r.Allows("handoff", 2) {
		t.Error("Allows is wrong")
	}
	// open has no handoff_to: no handoff, no spawn (they could not succeed).
	if got := strings.Join(byAgent["open"].At(0), " "); got != "agents blackboard read_file web_fetch web_search write_file" {
		t.Errorf("open: %s", got)
	}
	if len(diags) != 1 || diags[0].Code != "unknown-tool-group" || diags[0].Pos.Line != 4 {
		t.Errorf("diagnostics: %v", diags)
	}
}

// TestToolsOfferedWhereTheyCanSucceed: a cuelist of one cue with one agent
// offers none of the multi-agent tools (docs/design.md#seeing-each-other), except the blackboard
// when its conditions read it; the reason is there for the refusal. One
// agent serving two cues is two tasks: they share the board and may list
// each other.
func TestToolsOfferedWhereTheyCanSucceed(t *testing.T) {
	p, _ := planDiags(t, `
agent: {id: solo, command: [x]}
---
cuelist:
  id: one
  cues:
    - {id: A, agents: [solo]}
`)
	if got := strings.Join(p.Tools[0].At(0), " "); got != "memory" {
		t.Errorf("solo: %s, want only memory", got)
	}
	if why := NotOffered(p, p.Agents["solo"])["blackboard"]; !strings.Contains(why, "cuelist one has a single cue and a single agent (solo)") {
		t.Errorf("why not blackboard: %q", why)
	}
	p, _ = planDiags(t, `
agent: {id: solo, command: [x]}
---
cuelist:
  id: one
  cues:
    - {id: A, agents: [solo], conditions: [approved]}
`)
	if got := strings.Join(p.Tools[0].At(0), " "); got != "blackboard memory" {
		t.Errorf("solo with a condition: %s, want blackboard memory", got)
	}
	p, _ = planDiags(t, `
agent: {id: solo, command: [x]}
---
cuelist:
  id: two
  cues:
    - {id: A, agents: [solo]}
    - {id: B, agents: [solo], dependencies: [A]}
`)
	if got := strings.Join(p.Tools[0].At(0), " "); got != "agents blackboard memory" {
		t.Errorf("one agent, two cues: %s, want agents blackboard memory", got)
	}
}
