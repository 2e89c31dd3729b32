package spec

import (
	"slices"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
)

// PromptProtocols are the protocols whose agents are given a prompt (the
// coding agents): for the others prompt: has no effect.
var PromptProtocols = map[string]bool{"acp": true, "claude-code": true, "codex": true}

// PermissionKinds are the tool kinds an ACP agent asks permission for
// (ToolKind in the Agent Client Protocol), and default for any other.
var PermissionKinds = []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other", "default"}

// ParsePrompt parses a prompt: a Go text/template over the GO task
// (run_id, cue_id, agent_id, attempt, inputs, blackboard, blackboard_entries,
// handoff_context).
// A key that is not there is an error when the prompt is rendered.
func ParsePrompt(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Parse(text)
}

// promptFields are the top-level fields of a prompt's data.
var promptFields = map[string]bool{"run_id": true, "cue_id": true, "agent_id": true, "attempt": true,
	"inputs": true, "blackboard": true, "handoff_context": true, "blackboard_entries": true}

// prompt checks the prompt at ptr below o: it must parse, and name only
// the task's fields.
// A fan-out's cue prompt may also name its item (extra: the item's name,
// and item).
func (c *checker) prompt(o Origin, ptr, text string, extra ...string) {
	t, err := ParsePrompt("prompt", text)
	if err != nil {
		c.errorAt(o, ptr, "bad-template", "prompt is not a valid template: %s", strings.TrimPrefix(err.Error(), "template: "))
		return
	}
	var unknown []string
	for _, f := range topFields(t) {
		if !promptFields[f] && !slices.Contains(extra, f) {
			unknown = append(unknown, f)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		has := append([]string{"run_id", "cue_id", "agent_id", "attempt", "inputs", "blackboard", "blackboard_entries", "handoff_context"}, extra...)
		last := len(has) - 1
		c.errorAt(o, ptr, "bad-template", "prompt names .%s, which the task never has (it has .%s and .%s)", strings.Join(unknown, ", ."), strings.Join(has[:last], ", ."), has[last])
	}
}

// topFields are the first names of the field chains (.a.b) the template
// uses where the dot is the task (outside range and with, which move it).
func topFields(t *template.Template) []string {
	seen := map[string]bool{}
	var out []string
	var pipe func(p *parse.PipeNode)
	var walk func(n parse.Node)
	pipe = func(p *parse.PipeNode) {
		if p == nil {
			return
		}
		for _, cmd := range p.Cmds {
			for _, arg := range cmd.Args {
				switch a := arg.(type) {
				case *parse.FieldNode:
					if !seen[a.Ident[0]] {
						seen[a.Ident[0]] = true
						out = append(out, a.Ident[0])
					}
				case *parse.PipeNode:
					pipe(a)
				}
			}
		}
	}
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n != nil {
				for _, c := range n.Nodes {
					walk(c)
				}
			}
		case *parse.ActionNode:
			pipe(n.Pipe)
		case *parse.IfNode:
			pipe(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode: // the dot moves inside: only the pipeline and else
			pipe(n.Pipe)
			walk(n.ElseList)
		case *parse.WithNode:
			pipe(n.Pipe)
			walk(n.ElseList)
		}
	}
	walk(t.Root)
	return out
}

// promptFields checks an agent's prompt, and warns about a prompt or a
// permissions policy on an agent that never uses them.
func (c *checker) promptFields(a *Agent) {
	if a.Prompt != "" {
		if !PromptProtocols[a.Protocol] {
			c.warnAt(a.Origin, "/prompt", "unused-field", "prompt is only used by protocol: acp, claude-code and codex agents; agent %q is protocol: %s", a.ID, protocolName(a))
		}
		c.prompt(a.Origin, "/prompt", a.Prompt)
	}
	if _, cli := CLIProtocols[a.Protocol]; cli {
		_, gaps := CLIPermissionArgs(a)
		for _, g := range gaps {
			c.warnAt(a.Origin, "/permissions/"+g.Kind, "no-equivalent", "permissions: %s: %s has no equivalent (%s); it is not enforced", g.Kind, a.Permissions[g.Kind], g.Reason)
		}
	} else if len(a.Permissions) > 0 && a.Protocol != "acp" {
		c.warnAt(a.Origin, "/permissions", "unused-field", "permissions are only used by protocol: acp, claude-code and codex agents; agent %q is protocol: %s", a.ID, protocolName(a))
	}
}

func protocolName(a *Agent) string {
	if a.Protocol == "" {
		return "none"
	}
	return a.Protocol
}
