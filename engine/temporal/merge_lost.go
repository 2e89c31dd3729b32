package temporal

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/record"
)

// changeMergeBeat: a merge's activity has a heartbeat timeout (it
// heartbeats every mergeBeat), so a worker lost mid-merge is noticed after
// HeartbeatTimeout, not the verify timeout + 15 minutes; the workflow, not
// Temporal's retry policy, dispatches it again, with a note on the merge's
// attempt, as for an agent's phase (workerLost). A merge made by orch is
// safe to make again from its sources' branches (gitwork.MergeTree takes
// up a worktree or branch a lost round left). Only the round after the
// person's resolution cannot move: the resolution is in the worktree the
// lost worker kept, so the merge fails, naming that worker.
const (
	changeMergeBeat                   = "orch-merge-heartbeat"
	versionMergeBeat workflow.Version = 1
)

// versionOnce is a change's version, read once per execution.
type versionOnce struct {
	asked   bool
	version workflow.Version
}

func (v *versionOnce) get(ctx workflow.Context, change string, max workflow.Version) workflow.Version {
	if !v.asked {
		v.asked, v.version = true, workflow.GetVersion(ctx, change, workflow.DefaultVersion, max)
	}
	return v.version
}

// mergeBeat gives a merge's activity its heartbeat timeout, in runs since
// changeMergeBeat; a lost worker is then the workflow's to handle
// (mergeLost): Temporal tries it once.
func (w *wf) mergeBeat(o workflow.ActivityOptions) workflow.ActivityOptions {
	if w.merging.beat.get(w.ctx, changeMergeBeat, versionMergeBeat) >= versionMergeBeat {
		o.HeartbeatTimeout = HeartbeatTimeout
		o.RetryPolicy.MaximumAttempts = 1
	}
	return o
}

// mergeLost handles a round of merge m whose worker was lost (its
// heartbeat or its time ran out, or it was handed back): the round is
// dispatched again, up to workerLostTries workers in all, each loss a note
// on the merge's attempt. false: not a loss, or the merge cannot go on
// (then err becomes its failure; a kept worktree's worker is named).
func (w *wf) mergeLost(m *wfMerge, by string, err error) bool {
	why := lostWhy(err)
	if w.merging.beat.version < versionMergeBeat || why == "" || w.stopWhy != "" || m.kept || m.lost+1 >= workerLostTries {
		return false
	}
	m.lost++
	w.emit(record.Event{Type: record.EvNote, Cue: w.core.Cue(m.pos).ID, Agent: mergeAgentID, Attempt: m.attempt,
		Reason: fmt.Sprintf("attempt %d: its worker was lost during the merge (%s): the merge dispatched again, worker %d of %d", m.attempt, why, m.lost+1, workerLostTries)})
	w.mergeRound(m, by)
	return true
}
