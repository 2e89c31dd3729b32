package main

import (
	"fmt"
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
	agents := make([]*spec.Agent, 0, len(p.Agents))
	for _, a := range p.Agents {
		agents = append(agents, a)
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i].ID < agents[j].ID })
	missing := spec.MissingCommands(agents)
	if len(missing) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cuelist %s: no cue started: %d agent program(s) cannot be started from here", p.Cuelist.ID, len(missing))
	for _, m := range missing {
		fmt.Fprintf(&b, "\n  %s: %s", m.Agent.At(m.Field), m)
	}
	return fmt.Errorf("%s", b.String())
}
