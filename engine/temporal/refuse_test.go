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
		{"worktree", spec.Agent{ID: "a", Workspace: "worktree"}, "cue c: agent a has workspace: worktree"},
		{"mcp servers", spec.Agent{ID: "a", MCPServers: []spec.MCPServer{{Name: "github", Command: "github-mcp-server"}}}, ""},
		{"fallback", spec.Agent{ID: "a", Command: []string{"true"}, Fallback: []string{"b"}}, "agent b (a fallback) has workspace: worktree"},
	} {
		a := c.agent
		p := &planner.Plan{Order: []*planner.Cue{{Cue: &spec.Cue{ID: "c", Agents: []string{"a"}}}}, Agents: map[string]*spec.Agent{"a": &a}}
		if len(a.Fallback) > 0 {
			p.Agents["b"] = &spec.Agent{ID: "b", Command: []string{"true"}, Workspace: "worktree"}
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
