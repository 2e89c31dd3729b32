package temporal

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/orch-cli/orch/runner/proc"
)

// TestRedispatchKillsOnlyItsAttempt: an attempt dispatched again (its
// worker lost) kills what carries its attempt's tokens (step), and nothing
// of another task's attempt. A child's task id holds "/" (LEAD/1 is LEAD's
// first child; LEAD/1/2 that child's second): the tokens of LEAD's attempt
// 1 began as those of its first child's attempts did, so LEAD's GO run again
// killed its children's agents, and LEAD/1's attempt 2 its child LEAD/1/2's.
func TestRedispatchKillsOnlyItsAttempt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no agents run on Windows")
	}
	run := testRunID("r-tokens")
	tasks := []AttemptInput{
		{RunID: run, Cue: "LEAD", Attempt: 1},
		{RunID: run, Cue: "LEAD/1", Attempt: 1},
		{RunID: run, Cue: "LEAD/1", Attempt: 2},
		{RunID: run, Cue: "LEAD/1/2", Attempt: 1},
		{RunID: run, Cue: "LEAD_1", Attempt: 1}, // a cue id may hold "_"
	}
	for _, again := range tasks {
		t.Run(fmt.Sprintf("%s#%d", again.Cue, again.Attempt), func(t *testing.T) {
			agents := make([]int, len(tasks))
			for i, in := range tasks {
				agents[i] = agentWithToken(t, attemptTokens(in)+"try1")
			}
			killed := proc.KillTokened(attemptTokens(again))
			for i, in := range tasks {
				if mine := in == again; slices.Contains(killed, agents[i]) != mine {
					t.Errorf("attempt %d of %s dispatched again: the agent of attempt %d of %s killed: %v, want %v", again.Attempt, again.Cue, in.Attempt, in.Cue, !mine, mine)
				}
			}
		})
	}
}
