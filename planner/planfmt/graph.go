package planfmt

import (
	"fmt"
	"io"
	"strings"

	"github.com/orch-cli/orch/planner"
)

// Mermaid writes a flowchart: dependency edges solid, auto_follow edges
// labelled, arbitration edges dotted with the subject; the critical path's
// cues and edges in red.
func Mermaid(w io.Writer, p *planner.Plan) error {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for _, c := range p.Order {
		label := mermaidEscape(c.ID)
		if c.Description != "" {
			label += "<br/>" + mermaidEscape(c.Description)
		}
		if c.ForEach != nil { // a fan-out: a double-edged node saying over what
			fmt.Fprintf(&b, "  c%d[[\"%s<br/>%s\"]]\n", c.Index, label, mermaidEscape(forEachText(c.ForEach)))
			continue
		}
		fmt.Fprintf(&b, "  c%d[\"%s\"]\n", c.Index, label)
	}
	var critical []string
	for i, e := range Edges(p) {
		switch e.Kind {
		case "auto_follow":
			fmt.Fprintf(&b, "  c%d -->|auto| c%d\n", e.From.Index, e.To.Index)
		case "arbitration":
			fmt.Fprintf(&b, "  c%d -.->|\"%s\"| c%d\n", e.From.Index, mermaidEscape(e.Subject), e.To.Index)
		default:
			fmt.Fprintf(&b, "  c%d --> c%d\n", e.From.Index, e.To.Index)
		}
		if e.Critical {
			critical = append(critical, fmt.Sprint(i))
		}
	}
	var nodes []string
	for _, c := range p.Critical.Cues {
		nodes = append(nodes, fmt.Sprintf("c%d", c.Index))
	}
	b.WriteString("  classDef critical stroke:#d62728,stroke-width:3px\n")
	if len(nodes) > 0 {
		fmt.Fprintf(&b, "  class %s critical\n", strings.Join(nodes, ","))
	}
	if len(critical) > 0 {
		fmt.Fprintf(&b, "  linkStyle %s stroke:#d62728,stroke-width:3px\n", strings.Join(critical, ","))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidEscape makes text safe inside a quoted Mermaid label.
func mermaidEscape(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", " ").Replace(s)
}

// DOT writes clean Graphviz: one node per cue, solid dependency edges,
// auto_follow edges labelled, dashed arbitration edges, the critical path bold red.
func DOT(w io.Writer, p *planner.Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotID(p.Cuelist.ID))
	b.WriteString("  rankdir=LR;\n  node [shape=box, style=rounded];\n")
	for _, c := range p.Order {
		label := c.ID
		if c.Description != "" {
			label += "\n" + c.Description
		}
		if c.ForEach != nil { // a fan-out: a stacked box saying over what
			label += "\n" + forEachText(c.ForEach)
		}
		attrs := []string{"label=" + dotID(label)}
		if c.ForEach != nil {
			attrs = append(attrs, "shape=box3d")
		}
		if c.Critical {
			attrs = append(attrs, "color=red", "penwidth=2")
		}
		if c.Manual() {
			attrs = append(attrs, "peripheries=2")
		}
		fmt.Fprintf(&b, "  %s [%s];\n", dotID(c.ID), strings.Join(attrs, ", "))
	}
	for _, e := range Edges(p) {
		var attrs []string
		switch e.Kind {
		case "auto_follow":
			attrs = append(attrs, `label="auto"`)
		case "arbitration":
			attrs = append(attrs, "style=dashed", "label="+dotID(e.Subject))
		}
		if e.Critical {
			attrs = append(attrs, "color=red", "penwidth=2")
		}
		if len(attrs) > 0 {
			fmt.Fprintf(&b, "  %s -> %s [%s];\n", dotID(e.From.ID), dotID(e.To.ID), strings.Join(attrs, ", "))
		} else {
			fmt.Fprintf(&b, "  %s -> %s;\n", dotID(e.From.ID), dotID(e.To.ID))
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// dotID quotes a Graphviz ID.
func dotID(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
