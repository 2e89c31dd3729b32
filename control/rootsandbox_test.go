package control

import (
	"strings"
	"testing"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// As root, a claude-code agent with default: allow (claude's
// bypassPermissions) is refused before the run starts unless IS_SANDBOX=1
// reaches it: Claude Code itself would refuse to start.
func TestCheckRootSandbox(t *testing.T) {
	agent := func(env map[string]any, perms map[string]string) *spec.Agent {
		return &spec.Agent{ID: "coder", Protocol: "claude-code", Env: env, Permissions: perms}
	}
	allow := map[string]string{"default": "allow"}
	plan := func(a *spec.Agent) *planner.Plan {
		return &planner.Plan{Cuelist: &spec.Cuelist{ID: "c"}, Agents: map[string]*spec.Agent{a.ID: a}}
	}
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		name   string
		a      *spec.Agent
		euid   int
		getenv func(string) string
		refuse bool
	}{
		{"root, default allow, no IS_SANDBOX", agent(nil, allow), 0, noEnv, true},
		{"root, IS_SANDBOX=yes is not 1", agent(nil, allow), 0, func(string) string { return "yes" }, true},
		{"root, orch's IS_SANDBOX=1", agent(nil, allow), 0, func(string) string { return "1" }, false},
		{"root, the agent's env IS_SANDBOX=1", agent(map[string]any{"IS_SANDBOX": "1"}, allow), 0, noEnv, false},
		{"root, the agent's env overrides orch's", agent(map[string]any{"IS_SANDBOX": "0"}, allow), 0, func(string) string { return "1" }, true},
		{"root, no bypass", agent(nil, map[string]string{"edit": "allow"}), 0, noEnv, false},
		{"not root", agent(nil, allow), 1000, noEnv, false},
	} {
		err := checkRootSandbox(plan(tc.a), tc.euid, tc.getenv)
		if (err != nil) != tc.refuse {
			t.Errorf("%s: got %v, want refused %v", tc.name, err, tc.refuse)
		}
		if err != nil && !strings.Contains(err.Error(), `agent "coder" has permissions default: allow`) {
			t.Errorf("%s: the refusal does not name the agent and why: %v", tc.name, err)
		}
	}
}
