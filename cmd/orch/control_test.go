//go:build linux

package main

// Run-control tests (issue 5), through the real binary: resources and
// agents are never over-booked, fcfs tells the waiting agent, a stop
// cascades to every process, and many runs share one database. The crash
// and resume tests are in control_crash_test.go; the harness is in
// control_harness_test.go.

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// logAgent is a shell agent that records its GO interval in @DIR@/agents.log
// and works for sleep seconds in between.
func logAgent(sleep string) string {
	return `echo "$(date +%s%N) start $ORCH_CUE_ID" >> "@DIR@/agents.log"; sleep ` + sleep +
		`; echo "$(date +%s%N) end $ORCH_CUE_ID" >> "@DIR@/agents.log"`
}

// TestControlResourcePriority: two cues with no order between them claim a
// resource of capacity 1; priority arbitration sends the higher-priority
// one first (though it comes second in the file), and their GOs never
// overlap.
func TestControlResourcePriority(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	spec := c.write("cuelist.yaml", `
cuelist:
  id: prio
  max_parallel: 4
  arbitration: priority
  resources: {db: 1}
  defaults: {ack_timeout: 5s, timeout: 20s, kill_grace: 500ms}
  cues:
    # LOW is first in the file: only its priority can send HIGH first.
    - {id: LOW, agents: [low], claims: [db], priority: 1}
    - {id: HIGH, agents: [high], claims: [db], priority: 9}
---
agent: {id: low, command: [sh, -c, '`+logAgent("0.3")+`']}
---
agent: {id: high, command: [sh, -c, '`+logAgent("0.3")+`']}
`)
	c.mustOrch(0, "run", spec)

	evs := c.events("last")
	checkSeqs(t, evs)
	var goOrder []string
	for _, e := range evs {
		if e.Type == "cue/state" && e.State == "go" {
			goOrder = append(goOrder, e.Cue)
		}
	}
	if !slices.Equal(goOrder, []string{"HIGH", "LOW"}) {
		t.Errorf("GO order in the event log: %v, want [HIGH LOW] (HIGH has the higher priority)", goOrder)
	}
	if n, at := maxOverlap(eventIntervals(evs)); n > 1 {
		t.Errorf("event log: %d cues held db (capacity 1) at once: %v", n, at)
	}
	ivs := c.agentIntervals("agents.log")
	if len(ivs) != 2 {
		t.Fatalf("agents ran %d times, want 2: %v", len(ivs), ivs)
	}
	if n, at := maxOverlap(ivs); n > 1 {
		t.Errorf("agents' own clocks: %v were working at once on db (capacity 1): %v", at, ivs)
	}
	if ivs[0].cue != "HIGH" || ivs[0].end > ivs[1].start {
		t.Errorf("agents' own clocks: want HIGH to finish before LOW starts, got %v", ivs)
	}
}

// TestControlCapacity: many cues with no order between them compete for a
// subject of small capacity, a resource or a one-at-a-time agent, under
// each arbitration strategy. At no moment do more cues hold it than its
// capacity, by the event log (GO to the end of GO) and by the agents' own
// clocks; and the capacity is used (the test could see an over-booking).
func TestControlCapacity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		arbitration string
		cues        int
		resource    bool // claim pool (capacity 3); else target an agent of concurrency 1
		capacity    int
	}{
		{"resource-fcfs", "fcfs", 20, true, 3},
		{"resource-priority", "priority", 20, true, 3},
		{"agent-fcfs", "fcfs", 10, false, 1},
		{"agent-priority", "priority", 10, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCtl(t)
			var b strings.Builder
			fmt.Fprintf(&b, "cuelist:\n  id: capacity\n  max_parallel: %d\n  arbitration: %s\n", tt.cues, tt.arbitration)
			fmt.Fprintf(&b, "  resources: {pool: 3}\n  defaults: {ack_timeout: 5s, timeout: 30s, kill_grace: 500ms}\n  cues:\n")
			prio := map[string]int{}
			for i := 1; i <= tt.cues; i++ {
				id := fmt.Sprintf("C%02d", i)
				prio[id] = (i * 7) % tt.cues // distinct, not in file order
				claims := ""
				if tt.resource {
					claims = ", claims: [pool]"
				}
				fmt.Fprintf(&b, "    - {id: %s, agents: [w], priority: %d%s}\n", id, prio[id], claims)
			}
			concurrency := tt.cues // the agent is no bottleneck...
			if !tt.resource {
				concurrency = 1 // ...unless it is the subject
			}
			fmt.Fprintf(&b, "---\nagent: {id: w, concurrency: %d, command: [sh, -c, '%s']}\n", concurrency, logAgent("0.1"))
			spec := c.write("cuelist.yaml", b.String())
			c.mustOrch(0, "run", spec)

			evs := c.events("last")
			checkSeqs(t, evs)
			st := c.status("last")
			if st.State != "completed" || st.Counts["completed"] != tt.cues {
				t.Errorf("run %s, cues:%s; want completed, %d completed", st.State, st.states(), tt.cues)
			}
			ivs := eventIntervals(evs)
			if len(ivs) != tt.cues {
				t.Errorf("the event log has %d GOs, want %d", len(ivs), tt.cues)
			}
			n, at := maxOverlap(ivs)
			if n > tt.capacity {
				t.Errorf("event log: %d cues in GO at once on a subject of capacity %d: %v", n, tt.capacity, at)
			}
			if n < tt.capacity {
				t.Errorf("event log: at most %d cues in GO at once, never the capacity %d: the run was serialized more than it needs", n, tt.capacity)
			}
			if n, at := maxOverlap(c.agentIntervals("agents.log")); n > tt.capacity {
				t.Errorf("agents' own clocks: %d working at once on a subject of capacity %d: %v", n, tt.capacity, at)
			}
			if tt.arbitration == "priority" {
				// The first cues to GO are the highest priorities: the
				// planner's ordering edges let nothing else go before them.
				var first []int
				for _, e := range evs {
					if e.Type == "cue/state" && e.State == "go" && len(first) < tt.capacity {
						first = append(first, prio[e.Cue])
					}
				}
				slices.Sort(first)
				var want []int
				for p := tt.cues - tt.capacity; p < tt.cues; p++ {
					want = append(want, p)
				}
				if !slices.Equal(first, want) {
					t.Errorf("priorities of the first %d cues to GO: %v, want the highest %v", tt.capacity, first, want)
				}
			}
		})
	}
}

// TestControlFCFSTellsTheWaiter: under fcfs a cue that finds the resource
// held waits in STANDBY, the decision is recorded (escalation/conflict) and
// its protocol agent is told (an outbound escalation.conflict), and orch
// status lists the conflict.
func TestControlFCFSTellsTheWaiter(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	// Three jsonl agents, one per cue, so only the resource is contended;
	// each works 300ms so that the others reach STANDBY while it holds db.
	spec := c.write("cuelist.yaml", `
cuelist:
  id: fcfs
  max_parallel: 4
  arbitration: fcfs
  resources: {db: 1}
  defaults: {ack_timeout: 5s, timeout: 20s, kill_grace: 500ms}
  cues:
    - {id: A, agents: [ja], claims: [db]}
    - {id: B, agents: [jb], claims: [db]}
    - {id: C, agents: [jc], claims: [db]}
---
agent: {id: ja, protocol: jsonl, command: [fake-agent, sleep-in-go, 300ms]}
---
agent: {id: jb, protocol: jsonl, command: [fake-agent, sleep-in-go, 300ms]}
---
agent: {id: jc, protocol: jsonl, command: [fake-agent, sleep-in-go, 300ms]}
`)
	c.mustOrch(0, "run", spec)
	agentOf := map[string]string{"A": "ja", "B": "jb", "C": "jc"}

	evs := c.events("last")
	checkSeqs(t, evs)
	if n, at := maxOverlap(eventIntervals(evs)); n > 1 {
		t.Errorf("event log: %d cues held db (capacity 1) at once: %v", n, at)
	}
	waiting := map[string]bool{} // cues recorded as waiting for db
	for _, e := range evs {
		if e.Type != "escalation/conflict" {
			continue
		}
		var d conflict
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("%v: %v", e, err)
		}
		if d.ConflictType != "resource" || d.Resource != "db" || d.Resolution != "fcfs" || d.Winner == "" || d.Winner == e.Cue ||
			!slices.Contains(d.Cues, e.Cue) || !slices.Contains(d.Cues, d.Winner) {
			t.Errorf("conflict event does not say that %s waits for db held by another cue under fcfs: %v", e.Cue, e)
		}
		waiting[e.Cue] = true
	}
	if len(waiting) == 0 {
		t.Fatalf("no escalation/conflict event: the cues never competed for db?\n%v", evs)
	}
	told := map[string]bool{}
	for _, e := range evs {
		if e.Type != "message" {
			continue
		}
		var d struct {
			Direction string `json:"direction"`
			Type      string `json:"message_type"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("%v: %v", e, err)
		}
		if d.Direction == "out" && d.Type == "escalation.conflict" {
			if !waiting[e.Cue] || e.Agent != agentOf[e.Cue] {
				t.Errorf("escalation.conflict sent to %s for %s, which was not recorded as waiting: %v", e.Agent, e.Cue, e)
			}
			told[e.Cue] = true
		}
	}
	for cue := range waiting {
		if !told[cue] {
			t.Errorf("%s waited for db, but its agent %s was not sent escalation.conflict", cue, agentOf[cue])
		}
	}
	st := c.status("last")
	if len(st.Conflicts) == 0 {
		t.Errorf("orch status lists no conflicts; the event log has %d", len(waiting))
	}
	for _, d := range st.Conflicts {
		// cues_involved: the holders, then the cue that waits.
		if d.ConflictType != "resource" || d.Resource != "db" || d.Resolution != "fcfs" || len(d.Cues) < 2 || !waiting[d.Cues[len(d.Cues)-1]] {
			t.Errorf("orch status lists a conflict that is not a cue waiting for db under fcfs: %+v", d)
		}
	}
}

// TestControlCascadeStop: a signal to orch, or orch stop from another
// process, stops the run with everything its agents started: children in
// the agent's process group, a child that escaped it with setsid, and a
// protocol agent that ignores SIGTERM (and its child). Each is gone within
// the kill grace (1s) and a second of slack; orch exits 130; the run and
// its unfinished cues are stopped.
func TestControlCascadeStop(t *testing.T) {
	t.Parallel()
	const spec = `
cuelist:
  id: cascade
  max_parallel: 4
  defaults: {ack_timeout: 5s, timeout: 60s, kill_grace: 1s}
  cues:
    - {id: KIDS, agents: [kids]}
    - {id: ESCAPE, agents: [escape]}
    - {id: STUBBORN, agents: [stubborn]}
    - {id: AFTER, agents: [after], dependencies: [KIDS]}   # never reaches GO
---
agent:
  id: kids
  command: [sh, -c, 'echo $$ > "@DIR@/pids/kids"; sleep 300 & echo $! > "@DIR@/pids/kids.1"; sleep 300 & echo $! > "@DIR@/pids/kids.2"; touch "@DIR@/ready/kids"; wait']
---
agent:
  id: escape
  command: [sh, -c, 'echo $$ > "@DIR@/pids/escape"; setsid sleep 300 & echo $! > "@DIR@/pids/escape.1"; touch "@DIR@/ready/escape"; wait']
---
agent:
  id: stubborn
  protocol: jsonl
  command: [sh, -c, 'echo $$ > "@DIR@/pids/stubborn"; exec fake-agent ignore-term "@DIR@/pids/stubborn.child"']
---
agent: {id: after, command: ["true"]}
`
	// stop stops the run without waiting: the clock runs from the stop.
	// It returns the orch stop process, if it started one.
	tests := []struct {
		name string
		stop func(c *ctl, owner *orchProc) *orchProc
	}{
		{"SIGINT", func(c *ctl, owner *orchProc) *orchProc { owner.signal(syscall.SIGINT); return nil }},
		{"SIGTERM", func(c *ctl, owner *orchProc) *orchProc { owner.signal(syscall.SIGTERM); return nil }},
		{"orch-stop", func(c *ctl, owner *orchProc) *orchProc { return c.start("stop", "last") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCtl(t)
			file := c.write("cuelist.yaml", spec)
			for _, d := range []string{"pids", "ready"} {
				if err := os.Mkdir(c.path(d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			owner := c.start("run", file)
			c.waitInGo(owner, 20*time.Second, "KIDS", "ESCAPE", "STUBBORN")
			c.waitFor(10*time.Second, "the agents to write their pids", func() bool {
				_, e1 := os.Stat(c.path("ready/kids"))
				_, e2 := os.Stat(c.path("ready/escape"))
				b, _ := os.ReadFile(c.path("pids/stubborn.child"))
				return e1 == nil && e2 == nil && len(strings.TrimSpace(string(b))) > 0
			})
			pids := c.readPids("pids/*")
			if len(pids) != 7 {
				t.Fatalf("recorded pids %v, want 7", pids)
			}
			if alive := c.alive(pids); len(alive) < len(pids) {
				t.Fatalf("before the stop only %v of %v are alive", alive, pids)
			}

			id := c.status("last").ID
			stopAt := time.Now()
			stopper := tt.stop(c, owner)
			// Within kill_grace (1s) and some slack after the stop (a
			// loaded machine, the race detector), nothing is left, whether
			// or not orch has finished by then.
			var alive []int
			for deadline := stopAt.Add(6 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if alive = c.alive(pids); len(alive) == 0 || time.Now().After(deadline) {
					break
				}
			}
			for _, pid := range alive {
				t.Errorf("alive %s after the stop: %s", time.Since(stopAt).Round(time.Millisecond), describe(pid))
			}
			if code := owner.wait(20 * time.Second); code != 130 {
				t.Errorf("orch run exited %d after the stop, want 130\n%s", code, owner.output())
			}
			if stopper != nil {
				if code := stopper.wait(20 * time.Second); code != 0 {
					t.Errorf("orch stop last exited %d, want 0\n%s", code, stopper.output())
				}
				if want := "run " + id + " stopped"; !strings.Contains(stopper.stdout.String(), want) {
					t.Errorf("orch stop last does not say %q\n%s", want, stopper.output())
				}
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
			// The protocol agent was told first (docs/design.md#cascade-stop).
			evs := c.events("last")
			checkSeqs(t, evs)
			told := false
			for _, e := range evs {
				var d struct {
					Direction string `json:"direction"`
					Type      string `json:"message_type"`
				}
				if e.Type == "message" && json.Unmarshal(e.Data, &d) == nil && d.Direction == "out" && d.Type == "coord.stop" && e.Agent == "stubborn" {
					told = true
				}
			}
			if !told {
				t.Errorf("the event log has no coord.stop sent to the protocol agent stubborn")
			}
			if t.Failed() {
				t.Logf("%s", owner.output())
			}
		})
	}
}

// TestControlManyRunsOneDatabase: eight runs of 100 cues each and three
// watchers share one database, all started together. Every run completes
// with its 100 cues and a contiguous event log, and no process meets a
// locked or busy database.
func TestControlManyRunsOneDatabase(t *testing.T) {
	t.Parallel()
	const runs, cues = 8, 100
	c := newCtl(t)
	var b strings.Builder
	b.WriteString("cuelist:\n  id: many\n  max_parallel: 8\n  defaults: {ack_timeout: 10s, timeout: 60s, kill_grace: 500ms}\n  cues:\n")
	for i := 1; i <= cues; i++ {
		fmt.Fprintf(&b, "    - {id: C%03d, agents: [t]}\n", i)
	}
	b.WriteString("---\nagent: {id: t, concurrency: 100, command: [\"true\"]}\n")
	spec := c.write("cuelist.yaml", b.String())

	var owners, watchers []*orchProc
	for i := 0; i < runs; i++ {
		owners = append(owners, c.start("run", spec))
	}
	// `orch status --watch` lists the runs and never ends by itself, so
	// it needs the database to exist; `orch status last --watch` needs a
	// run: both start as soon as the first run is recorded.
	c.waitFor(20*time.Second, "the first run to be recorded", func() bool {
		if _, err := os.Stat(c.db); err != nil {
			return false
		}
		code, stdout, _ := c.orch("status", "--output", "json")
		return code == 0 && strings.Contains(stdout, `"id"`)
	})
	watchers = append(watchers, c.start("status", "--watch"), c.start("status", "--watch"), c.start("status", "last", "--watch"))

	ids := map[string]bool{}
	for _, p := range owners {
		if code := p.wait(120 * time.Second); code != 0 {
			t.Errorf("orch run exited %d, want 0\n%s", code, p.output())
			continue
		}
		ids[runID(t, p)] = true
	}
	if len(ids) != runs {
		t.Errorf("%d distinct run ids, want %d: %v", len(ids), runs, ids)
	}
	for id := range ids {
		st := c.status(id)
		if st.State != "completed" || st.Counts["completed"] != cues || len(st.Cues) != cues {
			t.Errorf("run %s is %s with %d cues, %d completed; want completed, %d/%d", id, st.State, len(st.Cues), st.Counts["completed"], cues, cues)
		}
		checkSeqs(t, c.events(id))
	}

	// The last-run watcher ends with its run; the others are left with
	// Ctrl-C, which is how a person leaves --watch.
	if code := watchers[2].wait(10 * time.Second); code != 0 {
		t.Errorf("orch status last --watch exited %d after its run ended, want 0\n%s", code, watchers[2].output())
	}
	for _, w := range watchers[:2] {
		if w.exited() {
			t.Errorf("orch status --watch ended by itself (exit %d) before it was interrupted\n%s", w.code, w.output())
			continue
		}
		w.signal(syscall.SIGINT)
	}
	sigintCodes := map[*orchProc]int{}
	for _, w := range watchers[:2] {
		sigintCodes[w] = w.wait(10 * time.Second)
	}

	locked := regexp.MustCompile(`(?i)locked|busy`)
	for _, p := range append(append([]*orchProc(nil), owners...), watchers...) {
		for _, out := range []string{p.stdout.String(), p.stderr.String()} {
			if m := locked.FindString(out); m != "" {
				t.Errorf("orch %s met a %s database\n%s", strings.Join(p.args, " "), m, p.output())
				break
			}
		}
	}
	integrityCheck(t, c.db)

	t.Run("watch-exits-0-on-SIGINT", func(t *testing.T) {
		for w, code := range sigintCodes {
			if code != 0 {
				t.Errorf("orch %s exited %d on SIGINT, want 0 (Ctrl-C is how --watch is left)\n%s", strings.Join(w.args, " "), code, w.output())
			}
		}
	})
}
