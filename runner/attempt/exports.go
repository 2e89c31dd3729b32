package attempt

import (
	"reflect"
	"sort"
)

// ChildExport is what a child task that completed gives its cue, when the
// cue accepts child exports: its outputs.
type ChildExport struct {
	Task    string
	Outputs map[string]any
}

// Clash is a child's value that the agent's own outputs hold otherwise.
type Clash struct {
	Key, Task string
}

// WithChildExports merges the exports of an attempt's children (every
// child that completed under it, grandchildren included) into its own
// outputs: children in the order they completed, a later one winning a
// clash between them, then the agent's own outputs, which win over any
// child's. The clashes with its own values come sorted by key, for a
// warning. Both engines merge so.
func WithChildExports(own map[string]any, exports []ChildExport) (map[string]any, []Clash) {
	if len(exports) == 0 {
		return own, nil
	}
	merged := map[string]any{}
	from := map[string]string{} // key -> the child task whose value it is
	for _, e := range exports {
		for k, v := range e.Outputs {
			merged[k], from[k] = v, e.Task
		}
	}
	var clashes []Clash
	for k, v := range own {
		if _, ok := from[k]; ok && !reflect.DeepEqual(merged[k], v) {
			clashes = append(clashes, Clash{Key: k, Task: from[k]})
		}
		merged[k] = v
	}
	sort.Slice(clashes, func(i, j int) bool { return clashes[i].Key < clashes[j].Key })
	return merged, clashes
}
