//go:build linux

package main

// Crash and resume tests (issue 5), through the real binary: orch killed
// with SIGKILL at a random moment, then orch resume. What was recorded as
// completed never runs again, everything else completes, the database and
// the event log stay whole, and nothing the dead owner started survives.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashSeed is the seed of the random kills: CONTROL_SEED repeats a run.
func crashSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("CONTROL_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CONTROL_SEED=%q: %v", s, err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// crashSpec writes a cuelist of n cues: chains of random length (each cue
// depends on the one before it and passes its trail along) and independent
// cues. The one agent appends the cue id to count/CUE each time it runs,
// writes its pid and its sleep's to pids, and works 20-100ms. It returns
// the trail each cue must end with.
func crashSpec(c *ctl, rng *rand.Rand, n int) (path string, trails map[string]string) {
	trails = map[string]string{}
	var b strings.Builder
	b.WriteString("cuelist:\n  id: crash\n  max_parallel: 4\n  defaults: {ack_timeout: 10s, timeout: 60s, kill_grace: 500ms}\n  cues:\n")
	for i := 1; i <= n; {
		length := 1 + rng.IntN(8) // 1: an independent cue
		prev := ""
		for k := 0; k < length && i <= n; k, i = k+1, i+1 {
			id := fmt.Sprintf("K%02d", i)
			deps := ""
			if prev != "" {
				deps = ", dependencies: [" + prev + "]"
			}
			fmt.Fprintf(&b, "    - {id: %s, agents: [w], inputs: {nap: \"0.%03d\"}%s}\n", id, 20+rng.IntN(81), deps)
			trails[id] = trails[prev] + id + ";"
			prev = id
		}
	}
	b.WriteString(`---
agent:
  id: w
  concurrency: 50
  provides: [trail]
  command: [sh, -c, 'echo "$ORCH_CUE_ID" >> "@DIR@/count/$ORCH_CUE_ID"; echo $$ >> "@DIR@/pids"; sleep "$ORCH_INPUT_NAP" & echo $! >> "@DIR@/pids"; wait; echo "trail=${ORCH_INPUT_TRAIL:-}$ORCH_CUE_ID;" >> "$ORCH_OUTPUT"']
`)
	if err := os.Mkdir(c.path("count"), 0o755); err != nil {
		c.t.Fatal(err)
	}
	return c.write("cuelist.yaml", b.String()), trails
}

// runCount is how many times the agent ran cue.
func (c *ctl) runCount(cue string) int {
	b, err := os.ReadFile(c.path("count/" + cue))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		c.t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// killAfter starts orch with args and kills it with SIGKILL after delay,
// unless it ended by itself first. It reports whether the kill landed.
func (c *ctl) killAfter(delay time.Duration, args ...string) (*orchProc, bool) {
	c.t.Helper()
	p := c.start(args...)
	select {
	case <-p.done:
		return p, false
	case <-time.After(delay):
	}
	p.signal(syscall.SIGKILL)
	<-p.done
	return p, p.code == -1
}

// TestControlCrashResume kills orch run with SIGKILL at a random moment,
// sometimes the orch resume that follows too, and resumes until the run
// completes; twenty times, each with a fresh database.
func TestControlCrashResume(t *testing.T) {
	t.Parallel()
	seed := crashSeed(t)
	t.Logf("seed %d (CONTROL_SEED=%d repeats this run)", seed, seed)
	const reps, cues = 20, 50
	for rep := 0; rep < reps; rep++ {
		t.Run(fmt.Sprintf("rep%02d", rep), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, uint64(rep)))
			c := newCtl(t)
			spec, trails := crashSpec(c, rng, cues)

			// completedAt[cue] is the cue's run count when its completion was
			// first seen recorded right after a kill: it must never grow.
			completedAt := map[string]int{}
			// finished: the kill landed after the run had recorded its end
			// (between the last commit and the process's exit); nothing is
			// left to resume then.
			finished := false
			snapshot := func(when string) (recorded bool) {
				if _, err := os.Stat(c.db); err != nil {
					return false // killed before the database was even created
				}
				code, _, stderr := c.orch("status", "last", "--output", "json")
				if code != 0 {
					if strings.Contains(stderr, "no runs") {
						return false // killed before the run was recorded
					}
					t.Fatalf("orch status last after the kill: exit %d\n%s", code, stderr)
				}
				st := c.status("last")
				finished = st.State == "completed" && st.Counts["completed"] == cues
				if st.State != "interrupted" && !finished {
					t.Errorf("after the kill %s the run is %s (%s), want interrupted", when, st.State, st.Reason)
				}
				for _, cue := range st.Cues {
					if _, seen := completedAt[cue.ID]; !seen && cue.State == "completed" {
						completedAt[cue.ID] = c.runCount(cue.ID)
					}
				}
				return true
			}

			delay := time.Duration(50+rng.IntN(751)) * time.Millisecond
			owner, killed := c.killAfter(delay, "run", spec)
			switch {
			case !killed && owner.code != 0:
				t.Fatalf("orch run exited %d before the kill\n%s", owner.code, owner.output())
			case !killed:
				t.Logf("the run completed before the kill at %s", delay)
			case !snapshot("of orch run"):
				t.Logf("killed at %s, before the run was recorded: nothing to resume", delay)
				for i := 1; i <= cues; i++ {
					if n := c.runCount(fmt.Sprintf("K%02d", i)); n != 0 {
						t.Errorf("K%02d ran %d times though no run was recorded", i, n)
					}
				}
				return
			default:
				t.Logf("killed at %s: %d of %d cues recorded completed", delay, len(completedAt), cues)
				// One time in three, kill the first resume as well.
				done := finished
				if !done && rng.IntN(3) == 0 {
					d := time.Duration(50+rng.IntN(351)) * time.Millisecond
					p, killed := c.killAfter(d, "resume", "last")
					switch {
					case killed:
						snapshot("of orch resume")
						done = finished
						t.Logf("resume killed at %s: %d cues recorded completed", d, len(completedAt))
					case p.code != 0:
						t.Fatalf("orch resume last exited %d\n%s", p.code, p.output())
					default:
						done = true
					}
				}
				if !done {
					c.mustOrch(0, "resume", "last")
				}
			}

			st := c.status("last")
			if st.State != "completed" || st.Counts["completed"] != cues {
				t.Errorf("run %s after resume, cues:%s; want completed, all %d", st.State, st.states(), cues)
			}
			for _, cue := range st.Cues {
				n := c.runCount(cue.ID)
				if n == 0 {
					t.Errorf("%s is %s but its agent never ran", cue.ID, cue.State)
				}
				if before, ok := completedAt[cue.ID]; ok && n != before {
					t.Errorf("%s was recorded completed before a kill (run %d time(s)), yet ran again during the resume: %d time(s) now", cue.ID, before, n)
				}
				// The attempt is recorded before the agent is launched.
				if n > len(cue.Attempts) {
					t.Errorf("%s ran %d times but only %d attempts are recorded", cue.ID, n, len(cue.Attempts))
				}
				for _, a := range cue.Attempts {
					if a.State == "running" {
						t.Errorf("%s attempt %d is still recorded as running in the completed run", cue.ID, a.Number)
					}
				}
				if got := fmt.Sprint(cue.Outputs["trail"]); got != trails[cue.ID] {
					t.Errorf("%s's trail output is %q, want %q (outputs pass along its chain across the crash)", cue.ID, got, trails[cue.ID])
				}
			}
			c.checkWhole(t)
		})
	}
}

// checkWhole checks a run resumed after kills to its end: its event log
// and database are whole, and nothing its owners started is left running.
func (c *ctl) checkWhole(t *testing.T) {
	t.Helper()
	checkSeqs(t, c.events("last"))
	integrityCheck(t, c.db)
	for _, pid := range c.alive(c.readPids("pids")) {
		t.Errorf("left running after the run completed: %s", describe(pid))
	}
}

// TestControlNotIdempotent: a cue marked idempotent: false that was in GO
// when orch died is not run again by orch resume: it is left interrupted,
// the run pauses (exit 3) saying how to continue, and orch go runs it.
func TestControlNotIdempotent(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	// ONCE works for five minutes the first time, at once the second.
	spec := c.write("cuelist.yaml", `
cuelist:
  id: once
  defaults: {ack_timeout: 5s, timeout: 60s, kill_grace: 500ms}
  cues:
    - {id: FIRST, agents: [quick]}
    - {id: ONCE, agents: [once], idempotent: false, dependencies: [FIRST]}
    - {id: AFTER, agents: [quick], dependencies: [ONCE]}
---
agent:
  id: once
  command: [sh, -c, 'echo x >> "@DIR@/once.count"; echo $$ >> "@DIR@/pids"; if [ "$(wc -l < "@DIR@/once.count")" -eq 1 ]; then sleep 300 & echo $! >> "@DIR@/pids"; wait; fi']
---
agent: {id: quick, command: ["true"]}
`)
	count := func() int {
		b, _ := os.ReadFile(c.path("once.count"))
		return strings.Count(string(b), "\n")
	}
	owner := c.start("run", spec)
	// AFTER gets its WARNING as soon as ONCE is in GO.
	c.waitStates(owner, 20*time.Second, map[string]string{"ONCE": "go", "AFTER": "warning"})
	c.waitFor(10*time.Second, "ONCE's agent to start", func() bool { return len(c.readPids("pids")) == 2 })
	owner.signal(syscall.SIGKILL)
	owner.wait(10 * time.Second)
	id := c.status("last").ID

	code, stdout, stderr := c.orch("resume", "last")
	if code != 3 {
		t.Errorf("orch resume last: exit %d, want 3 (paused: ONCE waits for a person)\n%s%s", code, stdout, stderr)
	}
	if want := "orch go " + id + " ONCE"; !strings.Contains(stdout, want) {
		t.Errorf("orch resume last does not say how to continue (%q)\n%s%s", want, stdout, stderr)
	}
	if n := count(); n != 1 {
		t.Errorf("orch resume ran ONCE again: it ran %d times, want 1", n)
	}
	st := c.status("last")
	if got := st.cue("ONCE").State; got != "interrupted" {
		t.Errorf("after orch resume ONCE is %s (%s), want interrupted", got, st.cue("ONCE").Reason)
	}
	if st.State != "paused" || st.cue("FIRST").State != "completed" || st.cue("AFTER").State == "completed" {
		t.Errorf("after orch resume the run is %s, cues:%s; want paused, FIRST completed, AFTER not", st.State, st.states())
	}
	t.Run("paused-cues-are-pending", func(t *testing.T) {
		// AFTER waits for ONCE: nothing prepares it while the run is paused.
		if got := st.cue("AFTER").State; got != "pending" {
			t.Errorf("after orch resume paused the run, AFTER is %s, want pending", got)
		}
	})
	// The dead owner's agent (still sleeping) was stopped by the resume.
	if alive := c.alive(c.readPids("pids")); len(alive) > 0 {
		for _, pid := range alive {
			t.Errorf("left running by the killed run after orch resume: %s", describe(pid))
		}
	}

	t.Logf("orch resume last:\n%s", stdout)
	c.mustOrch(0, "go", "last", "ONCE")
	if n := count(); n != 2 {
		t.Errorf("after orch go ONCE ran %d times, want 2", n)
	}
	st = c.status("last")
	if st.State != "completed" || st.Counts["completed"] != 3 {
		t.Errorf("after orch go the run is %s, cues:%s; want completed", st.State, st.states())
	}
	checkSeqs(t, c.events("last"))
}

// TestControlStopOrphanedRun: orch stop of a run whose owner was killed
// stops what the owner left running and ends the run, its cues and their
// attempts as stopped.
func TestControlStopOrphanedRun(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	spec := c.write("cuelist.yaml", `
cuelist:
  id: orphan
  defaults: {ack_timeout: 5s, timeout: 60s, kill_grace: 500ms}
  cues:
    - {id: HANG, agents: [hang]}
    - {id: NEXT, agents: [hang], dependencies: [HANG]}
---
agent:
  id: hang
  command: [sh, -c, 'echo $$ >> "@DIR@/pids"; sleep 300 & echo $! >> "@DIR@/pids"; wait']
`)
	owner := c.start("run", spec)
	c.waitInGo(owner, 20*time.Second, "HANG")
	c.waitFor(10*time.Second, "HANG's agent to start", func() bool { return len(c.readPids("pids")) == 2 })
	owner.signal(syscall.SIGKILL)
	owner.wait(10 * time.Second)
	pids := c.readPids("pids")
	if alive := c.alive(pids); len(alive) != 2 {
		t.Fatalf("after the owner's death its agent should still run (the test needs leftovers): alive %v of %v", alive, pids)
	}
	id := c.status("last").ID

	stdout, _ := c.mustOrch(0, "stop", "last")
	if want := "run " + id + " stopped"; !strings.Contains(stdout, want) {
		t.Errorf("orch stop last printed %q, want %q", stdout, want)
	}
	for _, pid := range c.alive(pids) {
		t.Errorf("left running after orch stop: %s", describe(pid))
	}
	st := c.status("last")
	if st.State != "stopped" {
		t.Errorf("run is %s (%s), want stopped", st.State, st.Reason)
	}
	for _, cue := range st.Cues {
		if cue.State != "stopped" {
			t.Errorf("cue %s is %s (%s), want stopped", cue.ID, cue.State, cue.Reason)
		}
	}
	checkSeqs(t, c.events("last"))

	t.Run("no-attempt-left-running", func(t *testing.T) {
		for _, cue := range st.Cues {
			for _, a := range cue.Attempts {
				if a.State == "running" {
					t.Errorf("cue %s attempt %d (%s) is still recorded as running in the stopped run", cue.ID, a.Number, a.Agent)
				}
			}
		}
	})
}

// TestControlConcurrentResume: two orch resume of one interrupted run,
// started together: exactly one continues it (and completes it); the other
// exits 1 naming the process that owns the run.
func TestControlConcurrentResume(t *testing.T) {
	t.Parallel()
	for rep := 0; rep < 3; rep++ {
		t.Run(fmt.Sprintf("rep%d", rep), func(t *testing.T) {
			t.Parallel()
			c := newCtl(t)
			// SLOW hangs the first time (then orch is killed), and takes 1.5s
			// when resumed: long enough for the loser to find the winner.
			spec := c.write("cuelist.yaml", `
cuelist:
  id: twice
  defaults: {ack_timeout: 5s, timeout: 60s, kill_grace: 500ms}
  cues:
    - {id: SLOW, agents: [slow]}
---
agent:
  id: slow
  command: [sh, -c, 'echo x >> "@DIR@/slow.count"; echo $$ >> "@DIR@/pids"; n=300; if [ "$(wc -l < "@DIR@/slow.count")" -gt 1 ]; then n=1.5; fi; sleep $n & echo $! >> "@DIR@/pids"; wait']
`)
			owner := c.start("run", spec)
			c.waitInGo(owner, 20*time.Second, "SLOW")
			c.waitFor(10*time.Second, "SLOW's agent to start", func() bool { return len(c.readPids("pids")) == 2 })
			owner.signal(syscall.SIGKILL)
			owner.wait(10 * time.Second)

			a, b := c.start("resume", "last"), c.start("resume", "last")
			codeA, codeB := a.wait(60*time.Second), b.wait(60*time.Second)
			winner, loser := a, b
			if codeB == 0 {
				winner, loser = b, a
			}
			if (codeA == 0) == (codeB == 0) || loser.code != 1 {
				t.Fatalf("exit codes %d and %d, want one 0 and one 1\n%s\n%s", codeA, codeB, a.output(), b.output())
			}
			m := regexp.MustCompile(`process (\d+)`).FindStringSubmatch(loser.stderr.String())
			if m == nil || m[1] != strconv.Itoa(winner.pid()) {
				t.Errorf("the losing orch resume does not name the owner, process %d, on stderr\n%s", winner.pid(), loser.output())
			}
			st := c.status("last")
			if st.State != "completed" {
				t.Errorf("run %s, cues:%s; want completed", st.State, st.states())
			}
			b2, _ := os.ReadFile(c.path("slow.count"))
			if n := strings.Count(string(b2), "\n"); n != 2 {
				t.Errorf("SLOW ran %d times, want 2 (once killed, once resumed by the winner alone)", n)
			}
			checkSeqs(t, c.events("last"))
			if alive := c.alive(c.readPids("pids")); len(alive) > 0 {
				for _, pid := range alive {
					t.Errorf("left running: %s", describe(pid))
				}
			}
		})
	}
}
