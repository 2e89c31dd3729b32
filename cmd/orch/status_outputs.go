package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/store"
)

// outputWidth is how much of an output's value orch status shows.
const outputWidth = 80

// printOutputs lists what each of the plan's cues delivered, a line per
// key, each value on one line and cut at outputWidth, with the command that
// shows the whole of a cut one. A fan-out's items are in its lists, a
// child task's outputs in its parent's.
func printOutputs(w io.Writer, r *store.RunDetail) {
	var lines []string
	cut := false
	for _, c := range r.Cues {
		if c.Parent != "" || len(c.Outputs) == 0 {
			continue
		}
		keys := make([]string, 0, len(c.Outputs))
		for k := range c.Outputs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := attempt.PromptValue(c.Outputs[k]) // a string as it is, else its JSON
			shown := oneLine(v, outputWidth)
			cut = cut || shown != v // cut, or its lines joined
			lines = append(lines, fmt.Sprintf("  %s.%s = %s", c.ID, k, shown))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\noutputs")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	if cut {
		fmt.Fprintf(w, "  (values cut to a line: orch status %s --output json has them whole)\n", r.ID)
	}
}
