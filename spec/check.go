package spec

import (
	"fmt"
	"strings"
)

// CheckOptions tune Check.
type CheckOptions struct {
	// CheckArtifacts makes handoff specs' artifacts be opened and hashed.
	CheckArtifacts bool
	// Root is the project directory artifact paths are relative to ("" = ".").
	Root string
}

// Check runs the semantic checks across everything loaded (docs/design.md#cuelists, docs/design.md#handoff-specs):
// unique ids, references that resolve, acyclic cue graphs, the static data-flow
// check and handoff specs. It never reads anything but artifacts, and only
// with CheckArtifacts, and whether a worktree agent's file is in a git
// repository.
func Check(set *Set, opts CheckOptions) Diagnostics {
	c := &checker{set: set, opts: opts, unknown: map[*Cue]bool{}, badExports: map[*Cue][]string{}}
	c.agents = c.uniqueAgents()
	c.unsure = set.incomplete
	for _, a := range set.Agents {
		c.unsure = c.unsure || a.ID == ""
	}
	c.uniqueCuelists()
	for _, a := range set.Agents {
		c.agent(a)
	}
	for _, cl := range set.Cuelists {
		c.cuelist(cl)
	}
	for _, h := range set.Handoffs {
		c.handoff(h)
	}
	return c.diags
}

type checker struct {
	set    *Set
	opts   CheckOptions
	agents map[string]*Agent
	diags  Diagnostics
	// unsure is set when an agent lost its id to an error already reported:
	// a reference to an unknown agent may be to it, and is not reported.
	unsure bool
	// unknown holds the cues that name an unknown agent or dependency: what
	// reaches them and their dependents is not known, so the data-flow
	// check leaves them alone rather than add errors the typo caused.
	unknown map[*Cue]bool
	// badExports are exports already reported as provided by no agent: the
	// data-flow check counts them as provided, to report the typo once.
	badExports map[*Cue][]string
}

func (c *checker) errorAt(o Origin, ptr, code, format string, args ...any) {
	c.diags.Add(Error, o.At(ptr), o.Ptr+ptr, code, format, args...)
}

func (c *checker) warnAt(o Origin, ptr, code, format string, args ...any) {
	c.diags.Add(Warning, o.At(ptr), o.Ptr+ptr, code, format, args...)
}

// uniqueAgents reports every agent id defined twice, at its second place.
func (c *checker) uniqueAgents() map[string]*Agent {
	byID := make(map[string]*Agent, len(c.set.Agents))
	for _, a := range c.set.Agents {
		if a.ID == "" {
			continue
		}
		if first, dup := byID[a.ID]; dup {
			c.errorAt(a.Origin, "/id", "duplicate-id", "duplicate agent id %q (first defined at %s)", a.ID, first.At("/id"))
			continue
		}
		byID[a.ID] = a
	}
	return byID
}

func (c *checker) uniqueCuelists() {
	byID := map[string]*Cuelist{}
	for _, cl := range c.set.Cuelists {
		if cl.ID == "" {
			continue
		}
		if first, dup := byID[cl.ID]; dup {
			c.errorAt(cl.Origin, "/id", "duplicate-id", "duplicate cuelist id %q (first defined at %s)", cl.ID, first.At("/id"))
			continue
		}
		byID[cl.ID] = cl
	}
}

func (c *checker) agent(a *Agent) {
	switch {
	case a.Run != "" && CLIProtocols[a.Protocol] != "":
		c.errorAt(a.Origin, "/run", "command-and-run", "agent %q is protocol: %s, which runs a command with orch's flags added: use command (it may be left out: %s)", a.ID, a.Protocol, CLIProtocols[a.Protocol])
	case len(a.Command) == 0 && a.Run == "" && CLIProtocols[a.Protocol] == "":
		c.errorAt(a.Origin, "", "missing-command", "agent %q needs command (an argv list) or run (a shell line)", a.ID)
	case len(a.Command) > 0 && a.Run != "":
		c.errorAt(a.Origin, "/run", "command-and-run", "agent %q has both command and run; use one (run is the explicit shell form)", a.ID)
	}
	if a.Protocol == "jsonl" {
		for _, f := range []struct {
			name string
			set  bool
		}{{"prepare", len(a.Prepare) > 0}, {"ready_check", len(a.ReadyCheck) > 0}} {
			if f.set {
				c.warnAt(a.Origin, "/"+f.name, "unused-field", "%s is only used by protocol: none agents; a jsonl agent prepares when it gets coord.warning", f.name)
			}
		}
	}
	if a.Workspace == "worktree" && !insideGitWorkTree(a.Dir()) {
		c.warnAt(a.Origin, "/workspace", "no-git-repository", "workspace: worktree needs a git repository, and %s is not inside one: orch run will refuse to start unless the project root is in one", a.Dir())
	}
	c.retry(a)
	c.promptFields(a)
	c.mcpServers(a)
	for i, to := range a.HandoffTo {
		c.agentRef(a.Origin, Pointer("handoff_to", i), to, "handoff_to")
		if to == a.ID {
			c.errorAt(a.Origin, Pointer("handoff_to", i), "self-reference", "agent %q cannot hand off to itself (no agent may appear twice in a handoff chain)", a.ID)
		}
	}
	for i, fb := range a.Fallback {
		c.agentRef(a.Origin, Pointer("fallback", i), fb, "fallback")
		if fb == a.ID {
			c.errorAt(a.Origin, Pointer("fallback", i), "self-reference", "agent %q cannot be its own fallback", a.ID)
		}
	}
}

// agentRef reports a reference to an agent that is not defined anywhere.
// When an error already reported may be why (quiet: the cuelist's include
// failed; unsure: a document was lost), only a near miss of a known agent
// is reported: a typo, rather than an agent the error hid.
func (c *checker) agentRef(o Origin, ptr, id, what string) bool {
	return c.agentRefIn(o, ptr, id, what, false)
}

func (c *checker) agentRefIn(o Origin, ptr, id, what string, quiet bool) bool {
	if id == "" {
		return false
	}
	if _, ok := c.agents[id]; ok {
		return true
	}
	msg := fmt.Sprintf("%s names unknown agent %q", what, id)
	s := closest(id, sortedKeys(c.agents))
	if (quiet || c.unsure) && s == "" { // not a near miss: perhaps defined where the error is
		return false
	}
	if s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	c.errorAt(o, ptr, "unknown-agent", "%s", msg)
	return false
}

func (c *checker) cuelist(cl *Cuelist) {
	g := NewCueGraph(cl)
	ids := make([]string, 0, len(g.Index))
	for _, cue := range cl.Cues {
		ids = append(ids, cue.ID)
	}
	for i, cue := range cl.Cues {
		if first, ok := g.Index[cue.ID]; ok && first != i {
			c.errorAt(cue.Origin, "/id", "duplicate-id", "duplicate cue id %q (first defined at %s)", cue.ID, cl.Cues[first].At("/id"))
		}
		c.cue(cl, g, cue, ids)
	}
	c.notify(cl)
	c.merge(cl.Origin, "/defaults/merge", cl.Defaults.Merge, nil)
	if gr := cl.Guardrails; gr.LoopWarn > 0 && gr.LoopBlock > 0 && gr.LoopWarn > gr.LoopBlock {
		c.errorAt(cl.Origin, "/guardrails/loop_warn", "bad-value", "loop_warn (%d) must not be above loop_block (%d)", gr.LoopWarn, gr.LoopBlock)
	}
	if gr := cl.Guardrails; gr.LoopFail > 0 {
		block, how := gr.LoopBlock, ""
		if block <= 0 {
			block, how = DefaultLoopBlock, ", its default"
		}
		if gr.LoopFail < block {
			c.errorAt(cl.Origin, "/guardrails/loop_fail", "bad-value", "loop_fail (%d) must not be below loop_block (%d%s): a repeated request is blocked from loop_block on and fails the attempt at loop_fail", gr.LoopFail, block, how)
		}
	}
	cycles := g.Cycles()
	for _, cyc := range cycles {
		names := make([]string, len(cyc))
		for i, v := range cyc {
			names[i] = cl.Cues[v].ID
		}
		closing := g.EdgePointer(cyc[len(cyc)-2], cyc[len(cyc)-1])
		if onlyAutoFollow(g, cyc) {
			c.diags.Add(Error, cl.Doc.Pos(closing), closing, "cycle",
				"auto_follow chain never ends: %s (each cue starts the next; the last cue of a chain must not auto_follow)", strings.Join(names, " -> "))
			continue
		}
		c.diags.Add(Error, cl.Doc.Pos(closing), closing, "cycle",
			"dependency cycle: %s (each cue must complete before the next one starts)", strings.Join(names, " -> "))
	}
	// A schema error in the cuelist (a misspelled dependencies: or inputs:)
	// loses what the data-flow check needs: it waits until that is fixed.
	if len(cycles) == 0 && (cl.Doc == nil || !cl.Doc.damaged) {
		c.dataFlow(cl, g)
	}
}

// onlyAutoFollow reports whether every edge of the cycle is an auto_follow link.
func onlyAutoFollow(g *CueGraph, cyc []int) bool {
	for i := 0; i+1 < len(cyc); i++ {
		if !strings.HasSuffix(g.EdgePointer(cyc[i], cyc[i+1]), "/auto_follow") {
			return false
		}
	}
	return true
}

func (c *checker) cue(cl *Cuelist, g *CueGraph, cue *Cue, ids []string) {
	cueRef := func(ptr, id, what string) {
		if _, ok := g.Index[id]; ok || id == "" {
			return
		}
		msg := fmt.Sprintf("%s names unknown cue %q in cuelist %q", what, id, cl.ID)
		if s := closest(id, ids); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		c.errorAt(cue.Origin, ptr, "unknown-cue", "%s", msg)
		if strings.HasPrefix(ptr, "/dependencies/") {
			c.unknown[cue] = true
		}
	}
	seen := map[string]bool{}
	for i, dep := range cue.Dependencies {
		cueRef(Pointer("dependencies", i), dep, "dependency")
		if seen[dep] {
			c.warnAt(cue.Origin, Pointer("dependencies", i), "duplicate-reference", "dependency %q is listed twice", dep)
		}
		seen[dep] = true
	}
	cueRef("/auto_follow", cue.AutoFollow, "auto_follow")
	if cue.Prompt != "" {
		var item []string
		if cue.ForEach != nil {
			item = []string{cue.ForEach.Name()}
			if cue.ForEach.Name() != "item" {
				item = append(item, "item")
			}
		}
		c.prompt(cue.Origin, "/prompt", cue.Prompt, item...)
	}
	c.forEach(cue)
	provided := map[string]bool{}
	agentsUnsure := false // an agent unknown, or what it provides lost to an error
	for i, id := range cue.Agents {
		if c.agentRefIn(cue.Origin, Pointer("agents", i), id, "cue "+cue.ID, cl.Doc != nil && cl.Doc.includeFailed) {
			a := c.agents[id]
			for _, p := range a.Provides {
				provided[p] = true
			}
			agentsUnsure = agentsUnsure || a.Doc != nil && a.Doc.damaged
		} else if id != "" {
			agentsUnsure = true
		}
	}
	if agentsUnsure {
		c.unknown[cue] = true
	}
	if cue.AcceptChildExports {
		kids := c.childAgents(cue)
		if len(kids) == 0 && !agentsUnsure {
			c.warnAt(cue.Origin, "/accept_child_exports", "unused-field",
				"cue %s accepts child exports, but none of its agents may hand off or spawn (none has a handoff_to)", cue.ID)
		}
		for _, a := range kids {
			for _, p := range a.Provides {
				provided[p] = true
			}
		}
	}
	c.merge(cue.Origin, "/merge", cue.Merge, cue)
	for i, r := range cue.Claims {
		if _, ok := cl.Resources[r]; !ok {
			msg := fmt.Sprintf("cue %s claims undeclared resource %q", cue.ID, r)
			if s := closest(r, sortedKeys(cl.Resources)); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (declare it under the cuelist's resources)"
			}
			c.errorAt(cue.Origin, Pointer("claims", i), "unknown-resource", "%s", msg)
		}
	}
	for i, e := range cue.Exports {
		if len(provided) > 0 && !provided[e] && !agentsUnsure {
			c.errorAt(cue.Origin, Pointer("exports", i), "unknown-export", "cue %s exports %q, which none of its agents provides", cue.ID, e)
			c.badExports[cue] = append(c.badExports[cue], e)
		}
	}
}

// childAgents are the agents that may work as children under a cue's
// agents: those in their handoff_to, and in those agents' handoff_to, on
// down. Their outputs may become the cue's with accept_child_exports.
func (c *checker) childAgents(cue *Cue) []*Agent {
	seen := map[string]bool{}
	var out []*Agent
	var walk func(a *Agent)
	walk = func(a *Agent) {
		for _, id := range a.HandoffTo {
			if k := c.agents[id]; k != nil && !seen[id] {
				seen[id] = true
				out = append(out, k)
				walk(k)
			}
		}
	}
	for _, id := range cue.Agents {
		if a := c.agents[id]; a != nil {
			walk(a)
		}
	}
	return out
}
