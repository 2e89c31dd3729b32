//go:build linux

package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestControlStalledOwnerFenced: an owner that stalls past its lease (here
// SIGSTOP) while orch resume takes its run over does not commit one more
// decision when it wakes up: its next commit fails with "lease lost", it
// exits non-zero, and a cue marked idempotent: false is started once, by
// the new owner only.
func TestControlStalledOwnerFenced(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	// GATE's agent waits for the file "open"; ONCE counts its starts.
	spec := c.write("cuelist.yaml", `
cuelist:
  id: fence
  defaults: {timeout: 60s, kill_grace: 500ms}
  cues:
    - {id: GATE, agents: [gate]}
    - {id: ONCE, agents: [once], idempotent: false, dependencies: [GATE]}
---
agent:
  id: gate
  command: [sh, -c, 'echo $$ >> "@DIR@/gate.pids"; while [ ! -f "@DIR@/open" ]; do sleep 0.05; done']
---
agent:
  id: once
  command: [sh, -c, 'echo x >> "@DIR@/once.count"']
`)
	count := func() int {
		b, _ := os.ReadFile(c.path("once.count"))
		return strings.Count(string(b), "\n")
	}
	owner := c.start("run", spec)
	c.waitInGo(owner, 20*time.Second, "GATE")
	c.waitFor(10*time.Second, "GATE's agent to start", func() bool { return len(c.readPids("gate.pids")) == 1 })

	// The owner stalls; its agent ends meanwhile: what it decides next
	// (GATE completed, ONCE's GO) waits in the stalled process.
	owner.signal(syscall.SIGSTOP)
	defer func() { _ = syscall.Kill(owner.pid(), syscall.SIGCONT) }()
	c.write("open", "")
	c.waitFor(60*time.Second, "the stalled owner's lease to run out", func() bool {
		return c.status("last").State == "interrupted"
	})

	// orch resume takes the run over and finishes it.
	if code, stdout, stderr := c.orch("resume", "last"); code != 0 {
		t.Fatalf("orch resume last: exit %d\n%s%s", code, stdout, stderr)
	}
	if n := count(); n != 1 {
		t.Fatalf("after orch resume ONCE ran %d times, want 1", n)
	}
	events := c.events("last")

	// The old owner wakes up: it must not commit or act on anything.
	owner.signal(syscall.SIGCONT)
	code := owner.wait(60 * time.Second)
	if code == 0 {
		t.Errorf("the owner whose run was taken over exited 0\n%s", owner.output())
	}
	if !strings.Contains(owner.stderr.String(), "lease lost: run ") {
		t.Errorf("the old owner does not say it lost its lease\n%s", owner.output())
	}
	if n := count(); n != 1 {
		t.Errorf("ONCE (idempotent: false) was started %d times, want 1: the old owner started it after the takeover\n%s", n, owner.output())
	}
	after := c.events("last")
	if len(after) != len(events) {
		for _, e := range after[len(events):] {
			t.Errorf("committed by the old owner after the takeover: %v", e)
		}
	}
	checkSeqs(t, after)
	if st := c.status("last"); st.State != "completed" || st.cue("ONCE").State != "completed" {
		t.Errorf("the run is %s, cues:%s; want completed", st.State, st.states())
	}
}
