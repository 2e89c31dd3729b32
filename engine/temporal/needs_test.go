//go:build unix

package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/runner/record"
)

// needsLink is a fakeLink that answers QueryNeeds as the test says.
type needsLink struct {
	*fakeLink
	mu     sync.Mutex
	answer func(asked []string) (Needs, error)
	asked  atomic.Int32
}

func (l *needsLink) Query(ctx context.Context, name string, arg, result any) error {
	if name != QueryNeeds {
		return l.fakeLink.Query(ctx, name, arg, result)
	}
	l.asked.Add(1)
	l.mu.Lock()
	answer := l.answer
	l.mu.Unlock()
	n, err := answer(arg.([]string))
	*result.(*Needs) = n
	return err
}

func (l *needsLink) set(answer func([]string) (Needs, error)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answer = answer
}

// stillNeeded answers that every agent asked about is needed.
func stillNeeded(asked []string) (Needs, error) { return Needs{Agents: asked}, nil }

// pooledEnv runs examples/protocol (a jsonl agent) on a worker whose
// workflow is reached through a needsLink, asking it often.
func pooledEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *Activities, *needsLink, RunInput) {
	t.Helper()
	check, most := poolCheck, poolCheckMax
	poolCheck, poolCheckMax = 5*time.Millisecond, 20*time.Millisecond
	t.Cleanup(func() { poolCheck, poolCheckMax = check, most })
	root, path := repoRoot(t), "examples/protocol/cuelist.yaml"
	env := newEnv()
	link := &needsLink{fakeLink: &fakeLink{env: env, board: map[string]BBValue{}}, answer: stillNeeded}
	acts := &Activities{Root: root, Link: func(context.Context) WorkflowLink { return link }}
	t.Cleanup(acts.Close)
	RegisterWorkflow(env)
	RegisterActivities(env, acts)
	env.SetTestTimeout(2 * time.Minute)
	return env, acts, link, RunInput{RunID: testRunID("r-needs"), Path: path, SpecHash: specHashOf(t, root, path), Inputs: map[string]any{"greeting_name": "Grace"}}
}

// pidOf is the process the last attempt of cue ran in.
func pidOf(t *testing.T, evs []record.Event, cue string) int {
	t.Helper()
	for _, e := range slices.Backward(evs) {
		if e.Type == record.EvAttemptEnded && e.Cue == cue {
			b, _ := json.Marshal(e.Data)
			var d record.AttemptEndedData
			if err := json.Unmarshal(b, &d); err != nil || d.PID == 0 {
				t.Fatalf("attempt/ended of %s has no pid: %s", cue, b)
			}
			return d.PID
		}
	}
	t.Fatalf("no attempt/ended of %s\n%s", cue, story(evs))
	return 0
}

func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func pooledRuns(a *Activities) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pools)
}

// waitFor polls cond until it holds or a deadline far below poolIdle
// passes (the idle close must not be what closed the pool).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(poolIdle / 4)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, poolIdle/4)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A jsonl agent's process on a worker ends soon after its run ends, when
// the workflow says so, not at the worker's idle close.
func TestPooledProcessEndsWithItsRun(t *testing.T) {
	env, acts, link, in := pooledEnv(t)
	link.set(func([]string) (Needs, error) { return Needs{Ended: true}, nil })
	evs := completed(t, env, in)
	pid := pidOf(t, evs, "ECHO-100")
	waitFor(t, "the run's pool closed", func() bool { return pooledRuns(acts) == 0 })
	waitFor(t, "the agent's process gone", func() bool { return gone(pid) })
}

// While the workflow says the agent may still get a phase (its next cue, a
// retry), its process stays; once it says not, the process ends. A
// workflow that cannot be asked leaves the process to the idle close.
func TestPooledProcessKeptWhileNeeded(t *testing.T) {
	env, acts, link, in := pooledEnv(t)
	evs := completed(t, env, in)
	pid := pidOf(t, evs, "ECHO-100")
	asked := link.asked.Load()
	waitFor(t, "three more questions", func() bool { return link.asked.Load() >= asked+3 })
	if pooledRuns(acts) != 1 || gone(pid) {
		t.Fatalf("the pool closed while the workflow needed its agent (pools %d, process gone %v)", pooledRuns(acts), gone(pid))
	}
	link.set(func([]string) (Needs, error) { return Needs{}, errors.New("the server is away") })
	asked = link.asked.Load()
	waitFor(t, "three more questions", func() bool { return link.asked.Load() >= asked+3 })
	if pooledRuns(acts) != 1 || gone(pid) {
		t.Fatalf("the pool closed while the workflow could not be asked (pools %d, process gone %v)", pooledRuns(acts), gone(pid))
	}
	link.set(func([]string) (Needs, error) { return Needs{Agents: []string{"someone-else"}}, nil })
	waitFor(t, "the agent's process gone", func() bool { return gone(pid) })
	if pooledRuns(acts) != 0 {
		t.Error("the run's pool is still there")
	}
}

// The workflow answers QueryNeeds from its cues: an agent of a cue not over
// yet is needed (and its fallbacks), an agent of none is not; once the run
// has ended, none is.
func TestWorkflowSaysWhichAgentsItNeeds(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/collab/held.yaml"
	env := runEnv(t, root)
	var during Needs
	var errDuring error
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryNeeds, []string{"held", "elsewhere"})
		if errDuring = err; err == nil {
			errDuring = v.Get(&during)
		}
		env.SignalWorkflow(SignalGo, GoSignal{Cue: "HOLD-100"})
	}, time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: testRunID("r-needs-wf"), Path: path, SpecHash: specHashOf(t, root, path)})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if errDuring != nil || during.Ended || !slices.Equal(during.Agents, []string{"held"}) {
		t.Errorf("while HOLD-100 waits for GO: %+v, %v; want agents [held]", during, errDuring)
	}
	v, err := env.QueryWorkflow(QueryNeeds, []string{"held"})
	var after Needs
	if err == nil {
		err = v.Get(&after)
	}
	if err != nil || !after.Ended || len(after.Agents) != 0 {
		t.Errorf("after the run: %+v, %v; want ended", after, err)
	}
}
