package temporal

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/record"
)

// How a run shows in Temporal's own UI and CLI: its workflow closes as the
// run ended (Failed, Canceled), it carries the run's cuelist, id and state
// as search attributes (temporal workflow list --query 'OrchState="failed"')
// and its activities are summarised by cue and attempt.

const (
	// changeCluster: the workflow closes Failed or Canceled as the run
	// ends, upserts the run's state as a search attribute when it started
	// with them, and summarises its activities.
	changeCluster                   = "orch-cluster"
	versionCluster workflow.Version = 1
)

// FailedType is the type of the error a failed run's workflow closes with.
const FailedType = "orch.run-failed"

// The search attributes of a run's workflow (Keyword, created on the
// namespace beforehand: temporal operator search-attribute create).
var (
	AttrCuelist = temporal.NewSearchAttributeKeyKeyword("OrchCuelist")
	AttrRun     = temporal.NewSearchAttributeKeyKeyword("OrchRun")
	AttrState   = temporal.NewSearchAttributeKeyKeyword("OrchState")
)

// SearchAttributes are those of a run starting: its cuelist, id, running.
func SearchAttributes(cuelist, runID string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(AttrCuelist.ValueSet(cuelist), AttrRun.ValueSet(runID), AttrState.ValueSet(string(record.RunRunning)))
}

// cluster says whether this run does what changeCluster brought.
func (w *wf) cluster() bool {
	return workflow.GetVersion(w.ctx, changeCluster, workflow.DefaultVersion, versionCluster) >= versionCluster
}

// closing is how the workflow of a run that ended with res closes:
// Completed, Failed (an application error of type FailedType) or Canceled
// (stopped), res the error's details; before versionCluster, Completed
// whatever the run's state.
func (w *wf) closing(res *RunResult) (*RunResult, error) {
	if !w.cluster() {
		return res, nil
	}
	switch record.RunState(res.State) {
	case record.RunFailed:
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("run %s failed: %s", w.in.RunID, res.Reason), FailedType, nil, *res) // a value: the SDK test environment keeps details unencoded
	case record.RunStopped:
		return nil, temporal.NewCanceledError(*res)
	}
	return res, nil
}

// stateChanged upserts the run's state search attribute, when the run
// started with search attributes (the namespace has them: upserting one it
// lacks would fail the workflow's task).
func (w *wf) stateChanged(state string) {
	if !w.in.SearchAttributes || !w.cluster() {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(w.ctx, AttrState.ValueSet(state)); err != nil {
		workflow.GetLogger(w.ctx).Warn("upserting the run's state search attribute", "error", err)
	}
}

// activitySummary names an activity in Temporal's UI: its phase, cue,
// attempt and agent.
func (w *wf) activitySummary(f *flight, name string) string {
	if !w.cluster() {
		return ""
	}
	return fmt.Sprintf("%s %s attempt %d (%s)", name, w.core.Cue(f.pos).ID, f.number, f.agent.ID)
}
