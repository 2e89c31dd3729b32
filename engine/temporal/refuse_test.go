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

// Every shape of worktree cues runs on workers: chains, fan-in (merged by
// a worker, whatever its on_conflict), fan-outs, several agents of a cue,
// fallbacks and jsonl agents in worktrees.
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
	resolved := &planner.Cue{Cue: &spec.Cue{ID: "C", Agents: []string{"w"}, Merge: &spec.Merge{Agent: "v"}}, Deps: []*planner.Cue{a, b}}
	fan := &planner.Cue{Cue: &spec.Cue{ID: "F", Agents: []string{"w"}, ForEach: &spec.ForEach{}}}
	for name, order := range map[string][]*planner.Cue{
		"chain":                    {a, ab, cue("C", []string{"w"}, ab)},
		"chain with plain cues":    {a, p1, cue("B", []string{"w"}, a, p1)},
		"fan-in":                   {a, b, cue("C", []string{"w"}, a, b)},
		"fan-in with a resolver":   {a, b, resolved},
		"through a plain cue":      {a, p1, cue("B", []string{"w"}, p1)},
		"a fallback in a worktree": {a, cue("B", []string{"falls"})},
		"a fan-out":                {fan, cue("G", []string{"w"}, fan)},
		"jsonl in a worktree":      {cue("A", []string{"wj"})},
		"two agents":               {cue("A", []string{"w", "v"})},
	} {
		if err := Unsupported(&planner.Plan{Cuelist: &spec.Cuelist{}, Order: order, Agents: agents}); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
}
