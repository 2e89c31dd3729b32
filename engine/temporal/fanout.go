package temporal

import (
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/sched"
)

// changeForEach is the workflow.GetVersion change id of fan-outs
// (for_each): the scheduler core's expansion, recorded and its items run
// as cues. A run recorded before it never had a for_each cue (the workers
// of the time refused the field), so its history never reaches here.
const changeForEach = "orch-for-each"

// expand makes room for a fan-out's items' attempts at the positions the
// core gave them (record.EventFor records the expansion).
func (w *wf) expand(d sched.Decision) {
	workflow.GetVersion(w.ctx, changeForEach, workflow.DefaultVersion, 1)
	c := w.core.Cue(d.Cue)
	for range d.Items {
		w.atts = append(w.atts, make([]*flight, len(c.Agents)))
	}
}
