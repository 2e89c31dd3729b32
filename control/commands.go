package control

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/spec"
)

// checkCommands refuses a run whose agents' programs cannot be started from
// here (not in PATH, not in the agent's workdir, not executable), before any
// cue starts: a typo in a command would otherwise show only when its cue
// is reached, after the work before it. It only looks at the file system.
func checkCommands(p *planner.Plan) error {
	if err := runner.CheckDrivers(p); err != nil {
		return fmt.Errorf("cuelist %s: no cue started: %v", p.Cuelist.ID, err)
	}
	missing := spec.MissingCommands(sortedAgents(p))
	if len(missing) == 0 {
		return checkRootSandbox(p, os.Geteuid(), os.Getenv)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cuelist %s: no cue started: %d agent program(s) cannot be started from here", p.Cuelist.ID, len(missing))
	for _, m := range missing {
		fmt.Fprintf(&b, "\n  %s: %s", m.Agent.At(m.Field), m)
	}
	return fmt.Errorf("%s", b.String())
}

// checkRootSandbox refuses, when orch runs as root (euid 0), a claude-code
// agent that claude would refuse: default: allow runs it with
// --permission-mode bypassPermissions, which Claude Code refuses as root
// unless IS_SANDBOX=1 is in its environment (the agent's env, else orch's).
// Found here, before any cue starts, rather than as a failed attempt.
func checkRootSandbox(p *planner.Plan, euid int, getenv func(string) string) error {
	if euid != 0 {
		return nil
	}
	var bad []string
	for _, a := range sortedAgents(p) {
		if args, _ := spec.CLIPermissionArgs(a); a.Protocol != "claude-code" || !slices.Contains(args, "bypassPermissions") {
			continue
		}
		v := getenv("IS_SANDBOX")
		if e, ok := a.Env["IS_SANDBOX"]; ok {
			v = fmt.Sprint(e)
		}
		if v != "1" {
			bad = append(bad, fmt.Sprintf("\n  %s: agent %q has permissions default: allow, which runs claude with --permission-mode bypassPermissions, and Claude Code refuses that as root unless IS_SANDBOX=1: give the agent env: {IS_SANDBOX: \"1\"}, or run orch with IS_SANDBOX=1", a.At("/permissions/default"), a.ID))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("cuelist %s: no cue started: orch runs as root%s", p.Cuelist.ID, strings.Join(bad, ""))
}

func sortedAgents(p *planner.Plan) []*spec.Agent {
	agents := make([]*spec.Agent, 0, len(p.Agents))
	for _, a := range p.Agents {
		agents = append(agents, a)
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i].ID < agents[j].ID })
	return agents
}
