package temporal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/record"
)

// continueCuelist is a chain of n cues after SEED, whose output LAST checks
// at the end, and six cues two at a time beside it.
func continueCuelist(n int) string {
	var b strings.Builder
	b.WriteString("cuelist:\n  id: long\n  max_parallel: 2\n  cues:\n    - id: SEED\n      agents: [seeder]\n      exports: [seed]\n")
	prev := "SEED"
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "    - id: C%d\n      agents: [step]\n      dependencies: [%s]\n", i, prev)
		prev = fmt.Sprintf("C%d", i)
	}
	fmt.Fprintf(&b, "    - id: LAST\n      agents: [checker]\n      dependencies: [%s, SEED]\n", prev)
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "    - id: W%d\n      agents: [step]\n", i)
	}
	b.WriteString(`---
agent:
  id: seeder
  provides: [seed]
  run: echo 'seed=42' >> "$ORCH_OUTPUT"
---
agent:
  id: step
  concurrency: 4
  run: "true"
---
agent:
  id: checker
  run: test "$ORCH_INPUT_SEED" = 42
`)
	return b.String()
}

// TestContinueAsNewCarriesTheRun runs a long cuelist with a tiny bound, so
// that its workflow continues as new many times (each execution run by
// hand, as the server would, with the input it handed on): every cue runs
// once, in one seq numbering across the executions, an output from the
// first execution reaches the last cue, and the blackboard's versions go
// on.
func TestContinueAsNewCarriesTheRun(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "long.yaml"), []byte(continueCuelist(20)), 0o644); err != nil {
		t.Fatal(err)
	}
	in := RunInput{RunID: testRunID("can1"), Path: "long.yaml", SpecHash: specHashOf(t, root, "long.yaml"), ContinueAfter: 20}
	all, res, gens := executions(t, root, in, func(env *testsuite.TestWorkflowEnvironment, in RunInput) {
		if in.Carry != nil && in.Carry.Gen == 3 { // a person's write in a later execution
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(SignalBBSet, BBSetSignal{Key: "seed", Value: 43, By: "test"})
			}, 0)
		}
		if in.Carry == nil || in.Carry.Gen == 3 { // an agent's usage in the first and a later one
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(SignalUsage, UsageReport{Asker: Asker{Cue: "SEED", Agent: "seeder", Attempt: 1}, More: record.Usage{InputTokens: 10, CostUSD: 0.5}})
			}, 0)
		}
	})
	if res.State != "completed" {
		t.Fatalf("after %d executions: %s (%s)\n%s", gens+1, res.State, res.Reason, story(all))
	}
	if gens < 5 {
		t.Fatalf("only %d executions: the bound did not continue the run as new", gens+1)
	}
	started := map[string]int{}
	notes := 0
	var bbVersions []int64
	var usage []record.UsageData
	for i, e := range all {
		if e.Seq != FirstSeq+int64(i) {
			t.Fatalf("event %d has seq %d: the executions' seqs are not one numbering\n%s", i, e.Seq, story(all))
		}
		switch e.Type {
		case record.EvAttemptStarted:
			started[e.Cue]++
		case record.EvNote:
			if strings.Contains(e.Reason, "continue-as-new") {
				notes++
			}
		case record.EvUsage:
			d, _ := e.Data.(record.UsageData)
			usage = append(usage, d)
		case record.EvBlackboard:
			d, _ := e.Data.(record.BlackboardData)
			bbVersions = append(bbVersions, d.Version)
		}
	}
	if len(started) != 20+2+6 {
		t.Fatalf("%d cues started, want 28: %v", len(started), started)
	}
	for cue, n := range started {
		if n != 1 {
			t.Fatalf("cue %s started %d times\n%s", cue, n, story(all))
		}
	}
	if notes != gens {
		t.Fatalf("%d continue-as-new notes for %d executions", notes, gens+1)
	}
	if len(usage) != 2 || usage[1].RunInputTokens != 20 || usage[1].RunCostUSD != 1 {
		t.Fatalf("usage events %+v: want the run's totals to go on across executions (20 tokens, $1)", usage)
	}
	if fmt.Sprint(bbVersions) != "[1 2]" {
		t.Fatalf("blackboard versions %v, want [1 2]: the board was not carried", bbVersions)
	}
}

// executions runs in, and every execution it continues as new in (each
// by hand, as the server would, with the input it handed on; before sets
// up each), and returns the events of them all, the run's result and how
// many times it continued.
func executions(t *testing.T, root string, in RunInput, before func(*testsuite.TestWorkflowEnvironment, RunInput)) ([]record.Event, RunResult, int) {
	t.Helper()
	var all []record.Event
	var res RunResult
	gens := 0
	for ; gens < 100; gens++ {
		env := runEnv(t, root)
		if before != nil {
			before(env, in)
		}
		env.ExecuteWorkflow(WorkflowName, in)
		if !env.IsWorkflowCompleted() {
			t.Fatalf("execution %d did not end", gens+1)
		}
		evs := events(t, env)
		if len(evs) == 0 {
			t.Fatalf("execution %d logged nothing", gens+1)
		}
		all = append(all, evs...)
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if errors.As(err, &can) {
			var next RunInput
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
				t.Fatal(err)
			}
			if next.Carry == nil || next.Carry.NextSeq != evs[len(evs)-1].Seq+1 {
				t.Fatalf("execution %d handed on %+v after seq %d", gens+1, next.Carry, evs[len(evs)-1].Seq)
			}
			in = next
			continue
		}
		if err != nil {
			t.Fatalf("execution %d: %v\n%s", gens+1, err, story(all))
		}
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		break
	}
	return all, res, gens
}

// TestEventsPageEarlier: an execution asked for events before its first
// names the execution before, which has them.
func TestEventsPageEarlier(t *testing.T) {
	l := eventLog{next: 50, prev: "run-before"}
	l.add(record.Event{Type: record.EvNote})
	if p, _ := l.page(10); p.Earlier != "run-before" || len(p.Events) != 0 {
		t.Fatalf("page(10) = %+v, want Earlier run-before", p)
	}
	if p, _ := l.page(49); p.Earlier != "" || len(p.Events) != 1 || p.Events[0].Seq != 50 {
		t.Fatalf("page(49) = %+v, want event 50", p)
	}
}
