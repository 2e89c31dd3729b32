package spec

// Merge is a cue's merge: block (or the cuelist's defaults.merge): how orch
// merges the worktree branches of a cue's dependencies before the cue
// starts from them, and the branches of a finished run into its result.
type Merge struct {
	// OnConflict is ask (the default), agent (the resolver Agent works in
	// the merge's worktree) or fail; left out with Agent set, agent.
	OnConflict string `json:"on_conflict,omitempty"`
	// Agent resolves conflicts with on_conflict: agent.
	Agent string `json:"agent,omitempty"`
	// Verify is a command (argv, no shell) run in the merged tree; its
	// failure is handled like a conflict.
	Verify []string `json:"verify,omitempty"`
}

// The values of on_conflict.
const (
	MergeAsk   = "ask"
	MergeAgent = "agent"
	MergeFail  = "fail"
)

// Policy is what a conflict leads to: on_conflict as written, else agent
// when a resolver is named, else ask.
func (m *Merge) Policy() string {
	switch {
	case m == nil:
		return MergeAsk
	case m.OnConflict != "":
		return m.OnConflict
	case m.Agent != "":
		return MergeAgent
	}
	return MergeAsk
}

// MergeOf is the merge that applies to cue c of cl: the cue's own, else the
// cuelist's defaults.merge, else nil (ask, no verify). A nil c is the run's
// result, which the defaults alone say.
func MergeOf(cl *Cuelist, c *Cue) *Merge {
	if c != nil && c.Merge != nil {
		return c.Merge
	}
	return cl.Defaults.Merge
}

// decodeMerge reads a cue's merge: block; a value of the wrong shape
// (reported by the schema) is nil.
func decodeMerge(v any) *Merge {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := &Merge{Verify: stringList(m["verify"])}
	out.OnConflict, _ = m["on_conflict"].(string)
	out.Agent, _ = m["agent"].(string)
	return out
}

// merge checks a merge: block at ptr (a cue's /merge, or the cuelist's
// /defaults/merge): a resolver that is named exists, and is named when
// on_conflict: agent needs one. cue is nil for the defaults.
func (c *checker) merge(o Origin, ptr string, m *Merge, cue *Cue) {
	if m == nil {
		return
	}
	switch {
	case m.Policy() == MergeAgent && m.Agent == "":
		c.errorAt(o, ptr+"/on_conflict", "missing-field", "on_conflict: agent needs agent: the id of the agent that resolves the conflicts")
	case m.Agent != "" && m.Policy() != MergeAgent:
		c.warnAt(o, ptr+"/agent", "unused-field", "agent %q resolves conflicts only with on_conflict: agent (this merge says %s)", m.Agent, m.Policy())
	}
	if m.Agent != "" {
		c.agentRef(o, ptr+"/agent", m.Agent, "merge.agent")
	}
	if cue == nil {
		return
	}
	for _, id := range cue.Agents {
		if a := c.agents[id]; a == nil || a.Workspace == "worktree" {
			return // one works in a worktree (or is unknown, reported already)
		}
	}
	c.warnAt(o, ptr, "unused-field", "cue %s has merge:, but none of its agents has workspace: worktree: nothing starts from the merged branches", cue.ID)
}
