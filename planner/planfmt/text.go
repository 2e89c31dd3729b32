package planfmt

import (
	"fmt"
	"io"
	"strings"

	"github.com/orch-cli/orch/planner"
)

// Text writes the plan for people: waves with the critical path marked,
// conflicts with their decisions, and each agent's effective tools.
func Text(w io.Writer, p *planner.Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "cuelist %s: %s in %s, arbitration %s\n", p.Cuelist.ID, count(len(p.Cues), "cue"), count(len(p.Waves), "wave"), p.Strategy)
	fmt.Fprintf(&b, "critical path %s: %s\n", short(p.Critical.Length), strings.Join(ids(p.Critical.Cues), " -> "))

	b.WriteString("\nwaves (* on the critical path)\n")
	width := 0
	for _, c := range p.Cues {
		width = max(width, len(c.ID))
	}
	for i, wave := range p.Waves {
		for j, c := range wave {
			label := "   "
			if j == 0 {
				label = fmt.Sprintf("%3d", i+1)
			}
			mark := " "
			if c.Critical {
				mark = "*"
			}
			fmt.Fprintf(&b, "%s %s %-*s  %-6s %s%s\n", label, mark, width, c.ID, short(c.Estimate), strings.Join(c.Agents, ", "), cueNotes(c))
		}
	}

	fmt.Fprintf(&b, "\nconflicts (%d)\n", len(p.Conflicts))
	if len(p.Conflicts) == 0 {
		b.WriteString("  none: no two cues that may run at the same time compete for a resource, an agent or an output\n")
	}
	for _, c := range p.Conflicts {
		fmt.Fprintf(&b, "  %s %s (%s): %s\n", c.Type, c.Subject, capacity(c), strings.Join(ids(c.Cues), ", "))
		fmt.Fprintf(&b, "    %s: %s\n", c.Strategy, c.Reason)
	}

	b.WriteString("\ntools (effective, by handoff depth)\n")
	for _, t := range p.Tools {
		fmt.Fprintf(&b, "  %s: %s\n", t.Agent, depthText(t))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cueNotes(c *planner.Cue) string {
	var notes []string
	if c.ForEach != nil {
		notes = append(notes, forEachText(c.ForEach))
	}
	if c.Manual() {
		notes = append(notes, "manual GO")
	}
	if c.AutoFollow != "" {
		notes = append(notes, "auto_follow "+c.AutoFollow)
	}
	if len(c.After) > 0 {
		notes = append(notes, "after "+strings.Join(ids(c.After), ", ")+" (arbitration)")
	}
	if len(c.Claims) > 0 {
		notes = append(notes, "claims "+strings.Join(c.Claims, ", "))
	}
	if len(notes) == 0 {
		return ""
	}
	return "  (" + strings.Join(notes, "; ") + ")"
}

func capacity(c *planner.Conflict) string {
	switch c.Type {
	case "timing":
		return fmt.Sprintf("concurrency %d", c.Capacity)
	case "output":
		return "one writer at a time"
	}
	return fmt.Sprintf("capacity %d", c.Capacity)
}

// depthText shows the tools at depth 0 and each depth where they change.
func depthText(t planner.AgentTools) string {
	var parts []string
	for d, tools := range t.ByDepth {
		if d > 0 && strings.Join(tools, ",") == strings.Join(t.ByDepth[d-1], ",") {
			continue
		}
		list := strings.Join(tools, ", ")
		if list == "" {
			list = "(none)"
		}
		if d == 0 {
			parts = append(parts, list)
		} else {
			parts = append(parts, fmt.Sprintf("from depth %d: %s", d, list))
		}
	}
	return strings.Join(parts, "; ")
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
