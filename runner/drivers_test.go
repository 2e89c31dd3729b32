//go:build unix

package runner

import (
	"testing"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
)

// echoDriver is a protocol added the way a new one is: a driver and its
// registration, nothing else. It acknowledges WARNING and STANDBY at once
// and completes with the task's inputs as outputs.
type echoDriver struct{ warned, stood bool }

func (d *echoDriver) Warning(*driver.Attempt) *attempt.Failure { d.warned = true; return nil }
func (d *echoDriver) Standby(*driver.Attempt) *attempt.Failure { d.stood = true; return nil }
func (d *echoDriver) Work(a *driver.Attempt, t *attempt.Task) (map[string]any, *attempt.Failure) {
	if !d.warned || !d.stood {
		return nil, attempt.Failf("failed", "GO before WARNING and STANDBY")
	}
	return map[string]any{"echo": t.Inputs["word"]}, nil
}
func (d *echoDriver) Close(*driver.Attempt) (int, *int) { return 0, nil }

func TestAProtocolIsADriver(t *testing.T) {
	driver.Register("test-echo", driver.Kind{New: func() driver.Driver { return &echoDriver{} }})
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  inputs: {word: hello}
  cues:
    - {id: A, agents: [echo], exports: [echo]}
    - {id: B, agents: [echo], dependencies: [A]}
`,
		"agents.yaml": `agent: {id: echo, command: [sh, -c, "exit 1"], provides: [echo]}
`,
	})
	p.Agents["echo"].Protocol = "test-echo" // spec knows only its own protocols
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	wantStates(t, rec, map[string]string{"A": "completed", "B": "completed"})
	if got := res.Cues[0]; got.State != record.CueCompleted {
		t.Errorf("A: %+v", got)
	}
	// The command would fail: the driver ran the attempts, not a process.
	if n := len(rec.of(record.EvMessage)); n != 0 {
		t.Errorf("%d protocol messages recorded for an agent whose driver does not speak", n)
	}
}
