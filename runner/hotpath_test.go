//go:build unix

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// TestPlainChainAsksTheLoopNothing: between one plain process's exit and
// the next cue's GO, an attempt makes no request to the loop (each is two
// goroutine switches on a chain's critical path): its task is ended as the
// loop takes its report, and the task tree still says how each ended.
func TestPlainChainAsksTheLoopNothing(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: A, agents: [ok]}
    - {id: B, agents: [ok], dependencies: [A]}
    - {id: C, agents: [no], dependencies: [B]}
`,
		"agents.yaml": "agent: {id: ok, command: [\"true\"]}\n---\nagent: {id: no, command: [\"false\"]}\n",
	})
	var calls int64 = -1
	ended := map[string]string{}
	testHookRunOver = func(r *run) {
		calls = r.loopCalls.Load()
		for _, n := range r.nodes {
			_, why := r.tasks.Working(n.ref)
			ended[n.id] = why
		}
	}
	defer func() { testHookRunOver = nil }()
	rec := newMemRecorder()
	if res := runPlan(t, p, rec, nil); res.State != record.RunFailed {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	wantStates(t, rec, map[string]string{"A": "completed", "B": "completed", "C": "failed"})
	if calls != 0 {
		t.Errorf("the attempts made %d requests to the loop, want none", calls)
	}
	for cue, how := range map[string]string{"A": "completed", "B": "completed", "C": "failed"} {
		if !strings.Contains(ended[cue], "ended (task "+cue+" "+how+")") {
			t.Errorf("task %s: %q, want it ended %s", cue, ended[cue], how)
		}
	}
}

// TestRunDoesNotWaitForItsObserver: the display of a run's events (a
// terminal, a CI log: Options.Observe) is not on the run's path. While the
// observer is stuck on the first event, the whole chain runs; then it sees
// every event once, in seq order, before Run returns.
func TestRunDoesNotWaitForItsObserver(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "C.ran")
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: A, agents: [ok]}
    - {id: B, agents: [ok], dependencies: [A]}
    - {id: C, agents: [last], dependencies: [B]}
`,
		"agents.yaml": "agent: {id: ok, command: [\"true\"]}\n---\nagent: {id: last, command: [touch, " + marker + "]}\n",
	})
	release := make(chan struct{})
	var seen []record.Event
	observe := func(e record.Event) {
		if len(seen) == 0 {
			<-release
		}
		seen = append(seen, e)
	}
	ran := make(chan struct{})
	go func() { // the last cue's process ran while the observer was stuck
		defer close(release)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(marker); err == nil {
				close(ran)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	rec := newMemRecorder()
	res := runPlan(t, p, rec, func(o *Options) { o.Observe = observe })
	select {
	case <-ran:
	default:
		t.Fatal("cue C did not run while the observer was showing the first event: the run waited for its display")
	}
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	if len(seen) == 0 || len(seen) != len(rec.events) {
		t.Fatalf("observed %d events, the run committed %d", len(seen), len(rec.events))
	}
	for i, e := range seen {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d observed has seq %d: want every event once, in seq order", i, e.Seq)
		}
	}
}

// TestPromptComesAfterItsEvents: the observer shows what it is handed a
// little later, but a person is asked for a manual cue's GO only once the
// display shows the cue standing by (a prompt under a display that still
// says "warning" is wrong).
func TestPromptComesAfterItsEvents(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + "  cues:\n    - {id: A, agents: [ok]}\n    - {id: DEPLOY, agents: [ok], dependencies: [A], go: manual}\n",
		"agents.yaml":  "agent: {id: ok, command: [\"true\"]}\n",
	})
	var mu sync.Mutex
	var shown []string
	var atPrompt []string
	rec := newMemRecorder()
	res := runPlan(t, p, rec, func(o *Options) {
		o.Observe = func(e record.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Type == record.EvCueState {
				shown = append(shown, e.Cue+" "+e.State)
			}
		}
		o.Approve = func(_ context.Context, cue string, _ []string) bool {
			mu.Lock()
			defer mu.Unlock()
			atPrompt = append([]string(nil), shown...)
			return true
		}
	})
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	if len(atPrompt) == 0 || atPrompt[len(atPrompt)-1] != "DEPLOY standby" {
		t.Errorf("at the GO prompt the display showed %q, want DEPLOY standby last", atPrompt)
	}
}
