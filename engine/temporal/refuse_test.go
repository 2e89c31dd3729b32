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
		{"handoff", spec.Agent{ID: "a", HandoffTo: []string{"b"}}, "cue c: agent a hands off (handoff_to)"},
		{"worktree", spec.Agent{ID: "a", Workspace: "worktree"}, ""}, // through a git remote (worktree.go)
		{"mcp servers", spec.Agent{ID: "a", MCPServers: []spec.MCPServer{{Name: "github", Command: "github-mcp-server"}}}, ""},
		{"fallback", spec.Agent{ID: "a", Command: []string{"true"}, Fallback: []string{"b"}}, "agent b (a fallback) hands off (handoff_to)"},
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

// Worktree cues run on workers, their branches merged at fan-in and into
// the run's result by a worker; a merge whose problem would go to a
// resolver agent (on_conflict: agent) is refused, naming the cue (or the
// result); fail and ask (the default) are not.
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
	fanIn := cue("C", []string{"w"}, a, b)
	resolved := &planner.Cue{Cue: &spec.Cue{ID: "C", Agents: []string{"w"}, Merge: &spec.Merge{Agent: "v"}}, Deps: []*planner.Cue{a, b}}
	fan := &planner.Cue{Cue: &spec.Cue{ID: "F", Agents: []string{"w"}, ForEach: &spec.ForEach{}}}
	const result = "the merge of the run's worktree branches into its result has on_conflict: agent (a resolver)"
	for _, c := range []struct {
		name  string
		order []*planner.Cue
		fail  bool // the cuelist's defaults: merge: {on_conflict: fail}, else {agent: v}
		want  string
	}{
		{"chain", []*planner.Cue{a, ab, cue("C", []string{"w"}, ab)}, false, ""},
		{"chain with plain cues", []*planner.Cue{a, p1, cue("B", []string{"w"}, a, p1)}, false, ""},
		{"fan-in with a resolver by default", []*planner.Cue{a, b, fanIn}, false, "cue C: the merge of its dependencies' branches has on_conflict: agent"},
		{"fan-in asking", []*planner.Cue{a, b, &planner.Cue{Cue: &spec.Cue{ID: "C", Agents: []string{"w"}, Merge: &spec.Merge{OnConflict: spec.MergeAsk}}, Deps: []*planner.Cue{a, b}}}, true, ""},
		{"fan-in failing", []*planner.Cue{a, b, fanIn}, true, ""},
		{"fan-in with a resolver", []*planner.Cue{a, b, resolved}, true, "cue C: the merge of its dependencies' branches has on_conflict: agent"},
		{"through a plain cue", []*planner.Cue{a, p1, cue("B", []string{"w"}, p1)}, false, result},
		{"through a plain cue, failing", []*planner.Cue{a, p1, cue("B", []string{"w"}, p1)}, true, ""},
		{"a fallback in a worktree", []*planner.Cue{a, cue("B", []string{"falls"})}, false, result},
		{"a fan-out", []*planner.Cue{fan}, false, result},
		{"a fan-out, failing", []*planner.Cue{fan, cue("G", []string{"w"}, fan)}, true, ""},
		{"jsonl in a worktree", []*planner.Cue{cue("A", []string{"wj"})}, false, ""},
		{"two agents", []*planner.Cue{cue("A", []string{"w", "v"})}, false, result},
		{"two agents, failing", []*planner.Cue{cue("A", []string{"w", "v"})}, true, ""},
	} {
		cl := &spec.Cuelist{}
		cl.Defaults.Merge = &spec.Merge{Agent: "v"}
		if c.fail {
			cl.Defaults.Merge = &spec.Merge{OnConflict: spec.MergeFail}
		}
		err := Unsupported(&planner.Plan{Cuelist: cl, Order: c.order, Agents: agents})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
