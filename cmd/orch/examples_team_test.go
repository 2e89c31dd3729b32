//go:build unix

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// TestExamplesTeamReal keeps examples/team's variant with the real CLIs
// (cuelist.real.yaml: its README points at it, e2e/clis runs it) the team
// of cuelist.yaml: the same cues, prompts, inputs and merges; its agents
// are team-cli-* where the stand-ins are team-*.
func TestExamplesTeamReal(t *testing.T) {
	team := func(name string) string {
		_, p, diags, err := planner.Compile(filepath.Join("..", "..", "examples", "team", name), "", spec.LoadOptions{})
		if err != nil || p == nil {
			t.Fatalf("%s: %v\n%v", name, err, diags)
		}
		cl := p.Cuelist
		standIn := func(agent string) string { return strings.Replace(agent, "team-cli-", "team-", 1) }
		for _, c := range cl.Cues {
			for i, a := range c.Agents {
				c.Agents[i] = standIn(a)
			}
		}
		merge := *cl.Defaults.Merge
		merge.Agent = standIn(merge.Agent)
		b, err := json.MarshalIndent(map[string]any{"cues": cl.Cues, "merge": merge, "inputs": cl.Inputs, "max_parallel": cl.MaxParallel}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if standIns, real := team("cuelist.yaml"), team("cuelist.real.yaml"); standIns != real {
		t.Errorf("examples/team/cuelist.real.yaml is not the team of cuelist.yaml:\n%s\nwant:\n%s", real, standIns)
	}
}
