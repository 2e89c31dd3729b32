package temporal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// repoRoot is the module's root: the workers' --root in these tests.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// specHashOf is the hash a run of the cuelist records.
func specHashOf(t *testing.T, root, path string) string {
	t.Helper()
	set, p, diags, err := planner.Compile(filepath.Join(root, path), "", spec.LoadOptions{Root: root})
	if err != nil || p == nil {
		t.Fatalf("compiling %s: %v %v", path, err, diags)
	}
	return set.HashBelow(root)
}

// runEnv is the SDK's in-process test environment with orch.run and real
// activities (they run the example's agents).
func runEnv(t *testing.T, root string) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newEnv()
	RegisterWorkflow(env)
	// No link to the workflow: the test environment's own client is a mock
	// that fails the test at any call (linkedEnv gives one).
	RegisterActivities(env, &Activities{Root: root, Link: func(context.Context) WorkflowLink { return nil }})
	env.SetTestTimeout(2 * time.Minute)
	return env
}

// events queries the workflow's whole log.
func events(t *testing.T, env *testsuite.TestWorkflowEnvironment) []record.Event {
	t.Helper()
	var all []record.Event
	after := int64(0)
	for {
		v, err := env.QueryWorkflow(QueryEvents, after)
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		var p EventsPage
		if err := v.Get(&p); err != nil {
			t.Fatal(err)
		}
		if len(p.Events) == 0 {
			return all
		}
		all = append(all, p.Events...)
		after = p.Events[len(p.Events)-1].Seq
	}
}

// runCompleted runs the cuelist at path below root as run testRunID(name),
// with real activities, checks it completed and returns its events.
func runCompleted(t *testing.T, root, path, name string) []record.Event {
	t.Helper()
	return completed(t, runEnv(t, root), RunInput{RunID: testRunID(name), Path: path, SpecHash: specHashOf(t, root, path)})
}

// completed runs orch.run in env, checks it completed and returns its
// events.
func completed(t *testing.T, env *testsuite.TestWorkflowEnvironment, in RunInput) []record.Event {
	t.Helper()
	env.ExecuteWorkflow(WorkflowName, in)
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	evs := events(t, env)
	if res.State != "completed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	return evs
}

// story renders the events a person reads in orch events, one a line.
func story(evs []record.Event) string {
	var b strings.Builder
	for _, e := range evs {
		switch e.Type {
		case record.EvCueState, record.EvRunState:
			b.WriteString(e.Type + " " + e.Cue + " " + e.State + "\n")
		case record.EvAttemptStarted:
			b.WriteString(e.Type + " " + e.Cue + " " + e.Agent + "\n")
		case record.EvAttemptEnded:
			b.WriteString(e.Type + " " + e.Cue + " " + e.Agent + " " + e.State + " " + e.Reason + "\n")
		case record.EvManualGo, record.EvNote:
			b.WriteString(e.Type + " " + e.Cue + " " + e.Reason + "\n")
		}
	}
	return b.String()
}

func TestDeployGatedByManualGo(t *testing.T) {
	root := repoRoot(t)
	path := "examples/deploy/cuelist.yaml"
	env := runEnv(t, root)
	var paused bool
	env.RegisterDelayedCallback(func() {
		// By now the chain is done up to the manual cue: the run waits for a person.
		evs := events(t, env)
		for _, e := range evs {
			if e.Type == record.EvRunState && e.State == string(record.RunPaused) && strings.Contains(e.Reason, "CUE-300") {
				paused = true
			}
		}
		env.SignalWorkflow(SignalGo, GoSignal{Cue: "CUE-300", By: "orch go"})
	}, time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: r1, Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"release": "1.4", "simulate_flaky_test": "no"}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: %v", env.GetWorkflowError())
	}
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	s := story(events(t, env))
	if res.State != "completed" || !paused {
		t.Fatalf("state %s (%s), paused before GO: %v\n%s", res.State, res.Reason, paused, s)
	}
	for _, want := range []string{
		"cue/state CUE-100 warning", "cue/state CUE-100 completed",
		"cue/state CUE-300 standby", "run/state  paused", "cue/go-approved CUE-300 orch go", "cue/state CUE-300 completed",
		"run/state  completed",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if strings.Index(s, "cue/state CUE-300 go") < strings.Index(s, "cue/go-approved CUE-300") {
		t.Errorf("CUE-300 went before its GO:\n%s", s)
	}
}

func TestDeployRetryOnFlakyTest(t *testing.T) {
	root := repoRoot(t)
	path := "examples/deploy/cuelist.yaml"
	env := runEnv(t, root)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGo, GoSignal{Cue: "CUE-300"}) }, time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: testRunID("r2"), Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"release": "1.4", "simulate_flaky_test": "yes"}})
	s := story(events(t, env))
	if !strings.Contains(s, "attempt/ended CUE-200 deploy-test failed") || !strings.Contains(s, "retry 2 of 2") || !strings.Contains(s, "cue/state CUE-200 completed") {
		t.Fatalf("no retry on exit 75 then success:\n%s", s)
	}
}

func TestStopRun(t *testing.T) {
	root := repoRoot(t)
	path := "examples/deploy/cuelist.yaml"
	env := runEnv(t, root)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, StopSignal{By: "orch stop: enough"}) }, time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: testRunID("r3"), Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"release": "1.4"}})
	// A stopped run's workflow closes Canceled, its result the details.
	var canceled *temporal.CanceledError
	if err := env.GetWorkflowError(); !errors.As(err, &canceled) {
		t.Fatalf("the workflow of a stopped run closed with %v, not canceled", err)
	}
	res, err := resultOf(env.GetWorkflowError(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := story(events(t, env))
	if res.State != "stopped" || !strings.Contains(s, "cue/state CUE-300 stopped") {
		t.Fatalf("state %s:\n%s", res.State, s)
	}
}

func TestSpecChangedIsRefused(t *testing.T) {
	root := repoRoot(t)
	env := runEnv(t, root)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: testRunID("r4"), Path: "examples/deploy/cuelist.yaml", SpecHash: "sha256:other"})
	// A failed run's workflow closes Failed, its result the details.
	var app *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &app) || app.Type() != FailedType || !app.NonRetryable() {
		t.Fatalf("the workflow of a failed run closed with %v, not failed", err)
	}
	res, err := resultOf(env.GetWorkflowError(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != "failed" || !strings.Contains(res.Reason, "is not the one the run started with") {
		t.Fatalf("state %s: %s", res.State, res.Reason)
	}
}

var _ = os.Getenv

// lostGoEnv is runEnv whose GO activity, for cue lose, is lost (its
// heartbeat times out) the first time; *lost counts the losses.
func lostGoEnv(t *testing.T, root, lose string, lost *int) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newEnv()
	env.SetTestTimeout(2 * time.Minute)
	RegisterWorkflow(env)
	a := &Activities{Root: root}
	env.RegisterActivityWithOptions(a.Plan, activity.RegisterOptions{Name: ActivityPlan})
	env.RegisterActivityWithOptions(a.Warning, activity.RegisterOptions{Name: ActivityWarning})
	env.RegisterActivityWithOptions(a.Standby, activity.RegisterOptions{Name: ActivityStandby})
	env.RegisterActivityWithOptions(func(ctx context.Context, in AttemptInput) (*AttemptResult, error) {
		if in.Cue == lose && *lost == 0 {
			*lost++
			return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		return a.Go(ctx, in)
	}, activity.RegisterOptions{Name: ActivityGo})
	return env
}

// A GO whose worker is lost (its heartbeat times out) is given to another
// worker as the same attempt, as a resumed local run runs the GO again; the
// cue completes with one attempt, not a failure, and the loss is a note on
// the attempt. Here the first worker to run CUE-100's GO is lost.
func TestWorkerLostGoRunsAgain(t *testing.T) {
	root := repoRoot(t)
	path := "examples/deploy/cuelist.yaml"
	lost := 0
	env := lostGoEnv(t, root, "CUE-100", &lost)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGo, GoSignal{Cue: "CUE-300"}) }, time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: testRunID("r5"), Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"release": "1.4", "simulate_flaky_test": "no"}})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	st := story(events(t, env))
	if lost != 1 || res.State != "completed" || strings.Count(st, "attempt/started CUE-100") != 1 || strings.Contains(st, "worker-lost") {
		t.Fatalf("lost %d, state %s (%s):\n%s", lost, res.State, res.Reason, st)
	}
	if !strings.Contains(st, "note CUE-100 attempt 1: its worker was lost during GO (no worker finished it in time: heartbeat timeout): GO dispatched again, worker 2 of 3") {
		t.Errorf("no note of the lost worker on CUE-100's attempt:\n%s", st)
	}
}

// The GO of a cue that is not idempotent (CUE-300, the deploy) is never run
// again by itself: its worker lost, the attempt is interrupted, the cue
// waits for orch go and the run pauses; orch go runs it again as attempt 2.
func TestNonIdempotentGoLostWaitsForGo(t *testing.T) {
	root := repoRoot(t)
	path := "examples/deploy/cuelist.yaml"
	lost := 0
	env := lostGoEnv(t, root, "CUE-300", &lost)
	var before string
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGo, GoSignal{Cue: "CUE-300"}) }, time.Minute)
	env.RegisterDelayedCallback(func() {
		before = story(events(t, env))
		env.SignalWorkflow(SignalGo, GoSignal{Cue: "CUE-300", By: "orch go again"})
	}, 2*time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: testRunID("r6"), Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"release": "1.4", "simulate_flaky_test": "no"}})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if lost != 1 || strings.Count(before, "attempt/started CUE-300") != 1 || strings.Contains(before, "cue/state CUE-300 completed") {
		t.Fatalf("lost %d: CUE-300 ran again by itself before the second orch go:\n%s", lost, before)
	}
	for _, want := range []string{
		"attempt/ended CUE-300 deploy-ship interrupted its worker was lost during GO (no worker finished it in time: heartbeat timeout) and cue CUE-300 is not idempotent: it is not run again by itself",
		"cue/state CUE-300 interrupted",
	} {
		if !strings.Contains(before, want) {
			t.Errorf("no %q before the second orch go:\n%s", want, before)
		}
	}
	if !strings.HasSuffix(before, "run/state  paused\n") {
		t.Errorf("the run does not wait for a person after the loss:\n%s", before)
	}
	st := story(events(t, env))
	if res.State != "completed" || strings.Count(st, "attempt/started CUE-300") != 2 || !strings.Contains(st, "cue/go-approved CUE-300 orch go again") {
		t.Fatalf("state %s (%s):\n%s", res.State, res.Reason, st)
	}
}
