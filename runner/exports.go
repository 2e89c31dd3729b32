package runner

import "github.com/orch-cli/orch/runner/attempt"

// exportToCue keeps a completed child's outputs for the cue whose tree it
// is in, if that cue declares accept_child_exports: they are held by the
// attempt of the cue's own agent (the tree's root), which merges them into
// its outputs when it completes (withChildExports). A child, and so its
// own children, ends before the attempt that started it.
func (c *child) exportToCue(outputs map[string]any) {
	root := c.parent
	for root.child != nil {
		root = root.child.parent
	}
	if !root.Cue.AcceptChildExports || len(outputs) == 0 {
		return
	}
	root.mu.Lock()
	root.exports = append(root.exports, attempt.ChildExport{Task: c.node.id, Outputs: outputs})
	root.mu.Unlock()
}

// withChildExports merges the exports of the attempt's children into its
// outputs (attempt.WithChildExports); a child's value lost to a different
// own value is noted as a warning.
func (a *attemptRun) withChildExports(own map[string]any) map[string]any {
	a.mu.Lock()
	exports := a.exports
	a.exports = nil
	a.mu.Unlock()
	merged, clashes := attempt.WithChildExports(own, exports)
	for _, c := range clashes {
		a.Note("warning: child task %s exports %q, which %s's own outputs hold with another value: cue %s keeps its own",
			c.Task, c.Key, a.Agent.ID, a.Cue.ID)
	}
	return merged
}
