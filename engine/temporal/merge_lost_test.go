package temporal

import (
	"context"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// swapMerge registers the worker's activities with merge in place of
// orch.merge.
type swapMerge struct {
	Registry
	merge any
}

func (s swapMerge) RegisterActivityWithOptions(a any, o activity.RegisterOptions) {
	if o.Name == ActivityMerge {
		a = s.merge
	}
	s.Registry.RegisterActivityWithOptions(a, o)
}

// lostMergeRun runs fanin.yaml (a clean merge at C) on a worker whose first
// orch.merge is lost (its heartbeat times out); beats are the heartbeat
// timeouts the merge's activities were given, old runs the workflow as
// one started before changeMergeBeat.
func lostMergeRun(t *testing.T, old bool) (res RunResult, st string, beats []time.Duration) {
	remote, root, _ := sharedRemote(t, fanInFiles("echo a > a.txt", "echo b > b.txt", ""))
	env := newEnv()
	env.SetTestTimeout(2 * time.Minute)
	RegisterWorkflow(env)
	a := &Activities{Root: root, Link: func(context.Context) WorkflowLink { return nil }}
	RegisterActivities(swapMerge{env, func(ctx context.Context, in MergeInput) (*MergeResult, error) {
		beats = append(beats, activity.GetInfo(ctx).HeartbeatTimeout)
		if len(beats) == 1 { // the worker is gone: no heartbeat came in time
			return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		return a.Merge(ctx, in)
	}}, a)
	if old {
		env.OnGetVersion(changeMergeBeat, workflow.DefaultVersion, versionMergeBeat).Return(workflow.DefaultVersion)
	}
	res, evs := runInCloneOn(t, env, root, remote, "fanin.yaml")
	return res, story(evs), beats
}

// TestMergeWorkerLostDispatchedAgain: a merge's activity has a heartbeat
// timeout, so a worker lost mid-merge is noticed then (not after the verify
// timeout + 15 minutes); the merge is dispatched again as the same attempt,
// with a note naming the loss, and the run completes.
func TestMergeWorkerLostDispatchedAgain(t *testing.T) {
	res, st, beats := lostMergeRun(t, false)
	if len(beats) < 2 || beats[0] != HeartbeatTimeout || beats[1] != HeartbeatTimeout {
		t.Errorf("the merge's heartbeat timeouts: %v, want %v", beats, HeartbeatTimeout)
	}
	if res.State != "completed" {
		t.Fatalf("%s: %s\n%s", res.State, res.Reason, st)
	}
	if !strings.Contains(st, "note C attempt 2: its worker was lost during the merge (no worker finished it in time: heartbeat timeout): the merge dispatched again, worker 2 of 3") {
		t.Errorf("no note of the lost worker on the merge's attempt:\n%s", st)
	}
	if strings.Count(st, "attempt/started C orch:merge") != 2 { // C's merge and the result's, once each
		t.Errorf("merge attempts:\n%s", st)
	}
}

// A run started before changeMergeBeat keeps its merge activity as it was:
// no heartbeat timeout, Temporal's retries, no note.
func TestMergeWorkerLostBeforeTheChange(t *testing.T) {
	res, st, beats := lostMergeRun(t, true)
	if len(beats) < 2 || beats[0] != 0 {
		t.Errorf("the merge's heartbeat timeouts: %v, want none", beats)
	}
	if res.State != "completed" || strings.Contains(st, "lost during the merge") {
		t.Fatalf("%s: %s\n%s", res.State, res.Reason, st)
	}
}
