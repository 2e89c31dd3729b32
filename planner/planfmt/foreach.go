package planfmt

import (
	"fmt"
	"strings"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// A fan-out (a cue with for_each) is one node of the plan: its items are
// known only when it runs. Each rendering says what it fans out over.

// JSONForEach is a fan-out in orch plan --output json.
type JSONForEach struct {
	From        string `json:"from,omitempty"`  // CUE.key
	Items       []any  `json:"items,omitempty"` // a static list
	As          string `json:"as"`
	MaxParallel int    `json:"max_parallel,omitempty"` // 0: only the run's max_parallel
	OnFailure   string `json:"on_failure"`
	MaxItems    int    `json:"max_items"`
}

func forEachJSON(c *planner.Cue) *JSONForEach {
	f := c.ForEach
	if f == nil {
		return nil
	}
	out := &JSONForEach{From: f.From, As: f.Name(), MaxParallel: f.MaxParallel, OnFailure: spec.OnFailureContinue, MaxItems: f.Limit()}
	if f.Fast() {
		out.OnFailure = spec.OnFailureFast
	}
	if f.From == "" {
		out.Items = nonNil(f.Items)
	}
	return out
}

// forEachText says what a fan-out fans out over, in a few words: "for each
// of PLAN.tasks as task, 3 at once, on_failure continue".
func forEachText(f *spec.ForEach) string {
	var b strings.Builder
	if f.From != "" {
		fmt.Fprintf(&b, "for each of %s", f.From)
	} else {
		fmt.Fprintf(&b, "for each of %d item(s)", len(f.Items))
	}
	if f.As != "" {
		fmt.Fprintf(&b, " as %s", f.As)
	}
	if f.MaxParallel > 0 {
		fmt.Fprintf(&b, ", %d at once", f.MaxParallel)
	}
	if !f.Fast() {
		b.WriteString(", on_failure continue")
	}
	return b.String()
}
