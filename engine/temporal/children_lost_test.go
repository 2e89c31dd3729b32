package temporal

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// lostKidEnv is realEnv whose activity named in lose (by cue) loses its
// worker (its heartbeat times out) the first time; lost counts the losses.
func lostKidEnv(t *testing.T, root string, lose map[string]string, lost map[string]int) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newEnv()
	acts := &Activities{Root: root, Link: func(context.Context) WorkflowLink { return envLink{env} }}
	t.Cleanup(acts.Close)
	RegisterWorkflow(env)
	RegisterActivities(env, acts)
	var mu sync.Mutex // activities run on their own goroutines
	for name, run := range map[string]func(context.Context, AttemptInput) (*AttemptResult, error){
		ActivityWarning: acts.Warning, ActivityStandby: acts.Standby, ActivityGo: acts.Go} {
		env.RegisterActivityWithOptions(func(ctx context.Context, in AttemptInput) (*AttemptResult, error) {
			mu.Lock()
			lose := lose[in.Cue] == name && lost[in.Cue] == 0
			if lose {
				lost[in.Cue]++
			}
			mu.Unlock()
			if lose {
				return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
			}
			return run(ctx, in)
		}, activity.RegisterOptions{Name: name})
	}
	env.SetTestTimeout(2 * time.Minute)
	return env
}

// A child's STANDBY or GO whose worker is lost is dispatched again, as a
// cue's is, when the cue whose tree it is in is idempotent: the handoff's
// receiver (LEAD-100/1) loses its GO's worker, the spawned helper
// (LEAD-100/2) its STANDBY's; each runs again on another worker as the
// same attempt, a note on it says so, and the run completes as without
// the losses.
func TestChildLostPhaseRunsAgain(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/children/cuelist.yaml"
	lost := map[string]int{}
	env := lostKidEnv(t, root, map[string]string{"LEAD-100/1": ActivityGo, "LEAD-100/2": ActivityStandby}, lost)
	evs := completed(t, env, RunInput{RunID: testRunID("r-kid-lost"), Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"topic": "tides"}})
	st := story(evs)
	if lost["LEAD-100/1"] != 1 || lost["LEAD-100/2"] != 1 {
		t.Fatalf("losses %v:\n%s", lost, st)
	}
	for _, want := range []string{
		"note LEAD-100/1 attempt 1: its worker was lost during GO (no worker finished it in time: heartbeat timeout): GO dispatched again, worker 2 of 3",
		"note LEAD-100/2 attempt 1: its worker was lost during STANDBY (no worker finished it in time: heartbeat timeout): STANDBY dispatched again, worker 2 of 3",
		"cue/state LEAD-100/1 completed", "cue/state LEAD-100/2 completed", "cue/state LEAD-100 completed",
	} {
		if !strings.Contains(st, want) {
			t.Errorf("no %q in\n%s", want, st)
		}
	}
	for _, cue := range []string{"LEAD-100/1", "LEAD-100/2", "LEAD-100"} {
		if n := strings.Count(st, "attempt/started "+cue+" "); n != 1 {
			t.Errorf("%s: %d attempts, want 1:\n%s", cue, n, st)
		}
	}
	if strings.Contains(st, "worker-lost") {
		t.Errorf("a lost worker failed an attempt:\n%s", st)
	}
	if out := outputsOf(t, evs, "LEAD-100"); out["answer"] != "TIDES" {
		t.Errorf("LEAD-100's outputs: %v", out)
	}
}

// A child's GO is part of its cue's GO: when that cue is not idempotent, a
// child's GO whose worker is lost is not run again by itself. The cue is
// interrupted, as when its own GO loses its worker: its attempt (and so
// the child) stopped, saying why, the run waiting for orch go, which runs
// the cue again.
func TestChildLostGoInterruptsItsCue(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/children/lost.yaml"
	// The SDK's test environment tells a cancelled activity's heartbeat
	// NotFound (as a restarting server would): the server's answer after
	// it, through the client, is the cancellation asked for.
	stubBeats(t, func() error { return temporal.NewCanceledError() })
	lost := map[string]int{}
	env := lostKidEnv(t, root, map[string]string{"LEAD-100/1": ActivityGo}, lost)
	var before string
	env.RegisterDelayedCallback(func() {
		before = story(events(t, env))
		env.SignalWorkflow(SignalGo, GoSignal{Cue: "LEAD-100", By: "orch go again"})
	}, time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: testRunID("r-kid-lost-go"), Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"topic": "tides"}})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatalf("%v\n%s", err, story(events(t, env)))
	}
	why := "its worker was lost during the GO of its child task LEAD-100/1 (no worker finished it in time: heartbeat timeout) and cue LEAD-100 is not idempotent: it is not run again by itself"
	for _, want := range []string{
		"attempt/ended LEAD-100/1 kid-helper stopped " + why,
		"cue/state LEAD-100/1 stopped",
		"attempt/ended LEAD-100 kid-lead interrupted " + why,
		"cue/state LEAD-100 interrupted",
	} {
		if !strings.Contains(before, want) {
			t.Errorf("no %q before orch go:\n%s", want, before)
		}
	}
	if lost["LEAD-100/1"] != 1 || strings.Count(before, "attempt/started LEAD-100/1 ") != 1 || strings.Contains(before, "cue/state LEAD-100 completed") {
		t.Fatalf("the lost GO ran again by itself:\n%s", before)
	}
	if !strings.HasSuffix(before, "run/state  paused\n") {
		t.Errorf("the run does not wait for a person after the loss:\n%s", before)
	}
	st := story(events(t, env))
	if res.State != "completed" || strings.Count(st, "attempt/started LEAD-100 ") != 2 || !strings.Contains(st, "cue/go-approved LEAD-100 orch go again") {
		t.Fatalf("state %s (%s):\n%s", res.State, res.Reason, st)
	}
}
