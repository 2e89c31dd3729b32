package temporal

import (
	"strings"
	"testing"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// What the temporal engine does not run yet is refused before anything
// starts, naming the cue and the agent.
func TestUnsupported(t *testing.T) {
	for _, c := range []struct {
		name  string
		agent spec.Agent
		want  string
	}{
		{"plain", spec.Agent{ID: "a", Command: []string{"true"}}, ""},
		{"jsonl", spec.Agent{ID: "a", Protocol: "jsonl", Command: []string{"agent"}}, ""},
		{"acp", spec.Agent{ID: "a", Protocol: "acp", Command: []string{"agent"}}, ""},
		{"claude-code", spec.Agent{ID: "a", Protocol: "claude-code"}, ""},
		{"codex", spec.Agent{ID: "a", Protocol: "codex"}, ""},
		{"handoff", spec.Agent{ID: "a", HandoffTo: []string{"b"}}, ""}, // through the workflow (children.go)
		{"worktree", spec.Agent{ID: "a", Workspace: "worktree"}, ""},   // through a git remote (worktree.go)
		{"mcp servers", spec.Agent{ID: "a", MCPServers: []spec.MCPServer{{Name: "github", Command: "github-mcp-server"}}}, ""},
		{"fallback", spec.Agent{ID: "a", Command: []string{"true"}, Fallback: []string{"b"}}, ""},
	} {
		a := c.agent
		p := &planner.Plan{Order: []*planner.Cue{{Cue: &spec.Cue{ID: "c", Agents: []string{"a"}}}}, Agents: map[string]*spec.Agent{"a": &a}}
		if len(a.Fallback) > 0 {
			p.Agents["b"] = &spec.Agent{ID: "b", Command: []string{"true"}, HandoffTo: []string{"c"}}
		}
		err := Unsupported(p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Worktree cues run on workers as a chain: branches that would need a
// merge (fan-in, a fan-out's items, several agents) are refused, naming
// the cue.
func TestWorktreeShapes(t *testing.T) {
	wt := func(id string) *spec.Agent { return &spec.Agent{ID: id, Workspace: "worktree"} }
	agents := map[string]*spec.Agent{"w": wt("w"), "v": wt("v"), "plain": {ID: "plain"}, "falls": {ID: "falls", Fallback: []string{"w"}},
		"wj": {ID: "wj", Protocol: "jsonl", Workspace: "worktree"}}
	cue := func(id string, agents []string, deps ...*planner.Cue) *planner.Cue {
		return &planner.Cue{Cue: &spec.Cue{ID: id, Agents: agents}, Deps: deps}
	}
	a := cue("A", []string{"w"})
	b := cue("B", []string{"w"})
	p1 := cue("P", []string{"plain"}, a)
	ab := cue("B", []string{"w"}, a)
	for _, c := range []struct {
		name  string
		order []*planner.Cue
		want  string
	}{
		{"chain", []*planner.Cue{a, ab, cue("C", []string{"w"}, ab)}, ""},
		{"chain with plain cues", []*planner.Cue{a, p1, cue("B", []string{"w"}, a, p1)}, ""},
		{"fan-in", []*planner.Cue{a, b, cue("C", []string{"w"}, a, b)}, "cue B: on --engine temporal the worktree cues must form a chain, each depending on the one before it (here A)"},
		{"through a plain cue", []*planner.Cue{a, p1, cue("B", []string{"w"}, p1)}, "cue B: on --engine temporal the worktree cues must form a chain"},
		{"a fallback in a worktree", []*planner.Cue{a, cue("B", []string{"falls"})}, "cue B: on --engine temporal the worktree cues must form a chain"},
		{"jsonl in a worktree", []*planner.Cue{cue("A", []string{"wj"})}, "cue A: agent wj has protocol: jsonl and workspace: worktree, not supported together"},
		{"two agents", []*planner.Cue{cue("A", []string{"w", "v"})}, "cue A: several agents in worktrees"},
	} {
		err := Unsupported(&planner.Plan{Order: c.order, Agents: agents})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
