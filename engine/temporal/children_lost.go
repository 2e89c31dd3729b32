package temporal

import (
	"fmt"

	"go.temporal.io/sdk/workflow"
)

// A child's phase whose worker was lost, as a cue's (apply.go workerLost):
// WARNING and STANDBY are dispatched again, up to workerLostTries workers,
// each loss a note on the child's attempt. A child's GO is part of the GO
// of the cue whose tree it is in, so that cue's idempotent decides, as a
// local run resumed after a crash decides for the whole cue: an idempotent
// cue's child runs its GO again on another worker; a cue that is not
// idempotent is interrupted (its attempt, and so the child, stopped) and
// waits for orch go. Before changeChildLost a child's lost phase failed its
// attempt as worker-lost.
const changeChildLost = "orch-child-lost-worker"

// kidLost decides what a child's lost phase does: again, dispatch it once
// more (try is how many workers it lost, from 1); else res is how the
// attempt ends.
func (c *collab) kidLost(gctx workflow.Context, k *kid, name string, in AttemptInput, try int, why string) (again bool, res AttemptResult) {
	w := c.w
	lost := AttemptResult{Failed: true, Class: "worker-lost", Reason: fmt.Sprintf("%s: %s", name, why)}
	if workflow.GetVersion(gctx, changeChildLost, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false, lost
	}
	root := k.rootFlight()
	if name == ActivityGo && root != nil && !w.core.Cue(root.pos).IsIdempotent() {
		cue := w.core.Cue(root.pos).ID
		reason := fmt.Sprintf("its worker was lost during the GO of its child task %s (%s) and cue %s is not idempotent: it is not run again by itself", in.Cue, why, cue)
		if root.stopWhy == "" && root.interrupt == "" {
			root.interrupt = reason
			root.cancel() // its GO's end (phase) interrupts the cue
		}
		return false, AttemptResult{Failed: true, Class: "stopped", Reason: root.interrupt}
	}
	if try >= workerLostTries {
		return false, lost
	}
	w.emit(lostNote(in.Cue, in.Agent, in.Attempt, phaseNames[name], why, try+1))
	return true, AttemptResult{}
}

// rootFlight is the cue's attempt whose tree k is in (nil: none).
func (k *kid) rootFlight() *flight {
	for k.pk != nil {
		k = k.pk
	}
	return k.pf
}

// interruptLost ends attempt f, whose GO was cancelled because a child's
// GO lost its worker (f.interrupt says so): the cue is interrupted and
// waits for orch go, as a cue whose own GO lost its worker; a fan-out's
// item, which cannot wait so, fails as worker-lost.
func (w *wf) interruptLost(f *flight) {
	if w.atts[f.pos][f.slot] == f && w.core.Interrupt(f.pos, f.slot, f.number, f.interrupt) {
		w.running--
		w.atts[f.pos][f.slot] = nil
		f.cancel()
		return
	}
	w.ended(f, AttemptResult{Failed: true, Class: "worker-lost", Reason: f.interrupt})
}
