//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestManualGoKeepsItsAttempt: a cue with go: manual is prepared, the run
// pauses (exit 3) and orch go continues it. The attempt prepared before the
// pause is the one that gets the GO (issue 33, item 3): it is recorded
// paused while the run waits, never stopped; orch go prepares it again
// under its own number (no attempt 2), also when the run pauses a second
// time for another cue, and also for an agent working in a worktree (its
// branch is made again). orch status shows one attempt per cue.
func TestManualGoKeepsItsAttempt(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	spec := mergeRepo(c, `cuelist:
  id: parked
  cues:
    - {id: SHIP, agents: [ship], go: manual}
    - {id: TAG, agents: [tag], go: manual}
---
agent:
  id: ship
  command: [sh, -c, 'echo shipped > shipped.txt']
  workspace: worktree
---
agent:
  id: tag
  command: [sh, -c, 'true']
`)
	c.mustOrch(3, "run", spec)
	st := c.status("last")
	for _, id := range []string{"SHIP", "TAG"} {
		if got := attemptsOf(st.cue(id)); got != "1:paused" {
			t.Errorf("paused run: %s's attempts are %q, want 1:paused (the prepared attempt waits for its GO)", id, got)
		}
	}
	c.mustOrch(3, "go", st.ID, "SHIP") // TAG still waits: the run pauses again
	st = c.status(st.ID)
	if got := attemptsOf(st.cue("SHIP")); got != "1:completed" {
		t.Errorf("after orch go SHIP: SHIP's attempts are %q, want 1:completed", got)
	}
	if got := attemptsOf(st.cue("TAG")); got != "1:paused" {
		t.Errorf("after orch go SHIP: TAG's attempts are %q, want 1:paused (prepared again under its number, paused again)", got)
	}
	c.mustOrch(0, "go", st.ID, "TAG")
	st = c.status(st.ID)
	for _, id := range []string{"SHIP", "TAG"} {
		if got := attemptsOf(st.cue(id)); got != "1:completed" {
			t.Errorf("completed run: %s's attempts are %q, want 1:completed", id, got)
		}
	}
	started := map[string]int{}
	for _, e := range c.events(st.ID) {
		switch {
		case e.Agent == "orch:merge": // the merge of SHIP's branch into the run's result
		case e.Type == "attempt/ended" && e.State == "stopped":
			t.Errorf("an attempt was recorded stopped: %v", e)
		case e.Type == "attempt/started":
			if e.Attempt != 1 {
				t.Errorf("attempt %d was started: %v", e.Attempt, e)
			}
			started[e.Cue]++
		}
	}
	if started["SHIP"] != 2 || started["TAG"] != 3 { // prepared once per process that owned the run
		t.Errorf("attempt 1 was started %v times, want SHIP 2 and TAG 3", started)
	}
	if out, err := c.gitIn("repo", "show", "orch/"+st.ID+"/SHIP/1:shipped.txt"); err != nil || out != "shipped" {
		t.Errorf("SHIP's branch: %q, %v", out, err)
	}
	text, _ := c.mustOrch(0, "status", st.ID)
	for _, id := range []string{"SHIP", "TAG"} {
		if !regexp.MustCompile(`(?m)^` + id + `\s+completed\s+\S+\s+1\s`).MatchString(text) {
			t.Errorf("orch status shows %s with other than 1 attempt:\n%s", id, text)
		}
	}
}

// attemptsOf lists a cue's own attempts as "N:state", for comparisons (the
// merges of its worktree branch, agent orch:merge, are left out).
func attemptsOf(c cueStatus) string {
	var out []string
	for _, a := range c.Attempts {
		if a.Agent == "orch:merge" {
			continue
		}
		out = append(out, fmt.Sprintf("%d:%s", a.Number, a.State))
	}
	return strings.Join(out, " ")
}

// TestManualGoCrash kills orch with SIGKILL at a random moment of orch run
// (before, at or after the pause for SHIP's GO) and of the orch go that
// follows, then continues the run (orch resume, orch go) until it
// completes: SHIP's agent is given its GO no more times than attempts are
// recorded (a kill in GO runs it again, as for any idempotent cue), no
// attempt number is recorded twice, none is left running or paused, and
// the log and the database stay whole; without a kill after the pause,
// SHIP has one attempt, given its GO once.
func TestManualGoCrash(t *testing.T) {
	t.Parallel()
	seed := crashSeed(t)
	t.Logf("seed %d (CONTROL_SEED=%d repeats this run)", seed, seed)
	for rep := range 8 {
		t.Run(fmt.Sprintf("rep%d", rep), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, uint64(rep)))
			c := newCtl(t)
			spec := c.write("cuelist.yaml", `
cuelist:
  id: crash
  defaults: {ack_timeout: 10s, timeout: 60s, kill_grace: 300ms}
  cues:
    - {id: BUILD, agents: [build]}
    - {id: SHIP, agents: [ship], dependencies: [BUILD], go: manual}
---
agent:
  id: build
  command: [sh, -c, 'echo $$ >> "@DIR@/pids"; sleep 0.1']
---
agent:
  id: ship
  prepare: [sh, -c, 'echo $$ >> "@DIR@/pids"; sleep 0.1']
  command: [sh, -c, 'echo go >> "@DIR@/shipped"; echo $$ >> "@DIR@/pids"; sleep 0.1']
`)
			runDelay := time.Duration(rng.IntN(500)) * time.Millisecond
			goDelay := time.Duration(rng.IntN(300)) * time.Millisecond
			if rep%4 == 0 { // no kill of orch run: it pauses
				runDelay = time.Minute
			}
			if rep%2 == 0 { // no kill of the first orch go
				goDelay = time.Minute
			}
			owner, killed := c.killAfter(runDelay, "run", spec)
			if !killed && owner.code != 3 {
				t.Fatalf("orch run exited %d, want 3 (paused)\n%s", owner.code, owner.output())
			}
			if _, err := os.Stat(c.db); err != nil || !strings.Contains(c.mustOrchAny("status", "last"), "crash") {
				t.Logf("killed at %s, before the run was recorded", runDelay)
				return
			}
			killedAfterPause, goKilled := false, false
			for i := 0; ; i++ {
				if i == 8 {
					t.Fatalf("the run did not complete: %s", c.status("last").states())
				}
				st := c.status("last")
				if st.State == "completed" {
					break
				}
				switch st.State {
				case "paused":
					if !goKilled {
						goKilled = true
						_, killedAfterPause = c.killAfter(goDelay, "go", "last", "SHIP")
						continue
					}
					c.orch("go", "last", "SHIP")
				case "interrupted":
					c.orch("resume", "last")
				default:
					t.Fatalf("the run is %s (%s)", st.State, st.Reason)
				}
			}
			t.Logf("orch run killed at %s: %v; orch go killed at %s: %v", runDelay, killed, goDelay, killedAfterPause)
			st := c.status("last")
			b, _ := os.ReadFile(c.path("shipped"))
			gos := strings.Count(string(b), "go")
			if gos == 0 || gos > len(st.cue("SHIP").Attempts) { // an attempt is recorded before its agent runs
				t.Errorf("SHIP's agent was given its GO %d times, and %d attempts are recorded", gos, len(st.cue("SHIP").Attempts))
			}
			seen := map[int]bool{}
			for _, a := range st.cue("SHIP").Attempts {
				if seen[a.Number] {
					t.Errorf("SHIP's attempt %d is recorded twice", a.Number)
				}
				seen[a.Number] = true
				if a.State == "running" || a.State == "paused" {
					t.Errorf("SHIP's attempt %d is %s in the completed run", a.Number, a.State)
				}
			}
			if !killedAfterPause && !killed {
				if got := attemptsOf(st.cue("SHIP")); got != "1:completed" || gos != 1 {
					t.Errorf("no kill after the pause, yet SHIP's attempts are %q (given GO %d times), want 1:completed", got, gos)
				}
			}
			c.checkWhole(t)
		})
	}
}

// mustOrchAny runs orch and returns its stdout whatever its exit code.
func (c *ctl) mustOrchAny(args ...string) string {
	c.t.Helper()
	_, stdout, _ := c.orch(args...)
	return stdout
}

// TestStopPausedRun: orch stop of a run paused for a manual GO ends the
// attempt that waited for it: recorded stopped, not left paused.
func TestStopPausedRun(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	spec := c.write("cuelist.yaml", `
cuelist: {id: stop, cues: [{id: SHIP, agents: [ship], go: manual}]}
---
agent: {id: ship, command: [sh, -c, 'true']}
`)
	c.mustOrch(3, "run", spec)
	c.mustOrch(0, "stop", "last")
	st := c.status("last")
	if got := attemptsOf(st.cue("SHIP")); st.State != "stopped" || got != "1:stopped" {
		t.Errorf("after orch stop the run is %s and SHIP's attempts are %q, want stopped and 1:stopped", st.State, got)
	}
}
