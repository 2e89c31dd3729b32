package runner

import (
	"reflect"
	"sort"
)

// childExport is what a child task that completed gives its cue, when the
// cue accepts child exports: its outputs.
type childExport struct {
	task    string
	outputs map[string]any
}

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
	root.exports = append(root.exports, childExport{task: c.node.id, outputs: outputs})
	root.mu.Unlock()
}

// withChildExports merges the exports of the attempt's children (every
// child that completed under it, grandchildren included) into its outputs:
// children in the order they completed, a later one winning a clash between
// them, then the agent's own outputs, which win over any child's. A child's
// value lost to a different own value is noted as a warning.
func (a *attemptRun) withChildExports(own map[string]any) map[string]any {
	a.mu.Lock()
	exports := a.exports
	a.exports = nil
	a.mu.Unlock()
	if len(exports) == 0 {
		return own
	}
	merged := map[string]any{}
	from := map[string]string{} // key -> the child task whose value it is
	for _, e := range exports {
		for k, v := range e.outputs {
			merged[k], from[k] = v, e.task
		}
	}
	var clashes []string
	for k, v := range own {
		if _, ok := from[k]; ok && !reflect.DeepEqual(merged[k], v) {
			clashes = append(clashes, k)
		}
		merged[k] = v
	}
	sort.Strings(clashes)
	for _, k := range clashes {
		a.Note("warning: child task %s exports %q, which %s's own outputs hold with another value: cue %s keeps its own",
			from[k], k, a.Agent.ID, a.Cue.ID)
	}
	return merged
}
