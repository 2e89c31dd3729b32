//go:build linux

package main

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestControlRunNotRecorded: when the run's owner can no longer record it
// (here another process has taken its lease: the store refuses this
// owner's writes from then on), orch run stops every agent and exits 1,
// saying what failed and what to do. It never waits forever on attempts
// whose end cannot be recorded.
func TestControlRunNotRecorded(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	file := c.write("cuelist.yaml", `
cuelist:
  id: lease
  defaults: {ack_timeout: 30s, timeout: 10m, kill_grace: 1s}
  cues:
    - {id: LONG, agents: [long]}
    - {id: PROTO, agents: [proto]}
---
agent:
  id: long
  command: [sh, -c, 'echo $$ > "@DIR@/long.pid"; while :; do echo chatter; sleep 0.05; done']
---
agent:
  id: proto
  protocol: jsonl
  command: [sh, -c, 'echo $$ > "@DIR@/proto.pid"; exec fake-agent hang-in-go']
`)
	owner := c.start("run", file)
	c.waitInGo(owner, 30*time.Second, "LONG", "PROTO")
	c.waitFor(10*time.Second, "the agents to write their pids", func() bool {
		_, e1 := os.Stat(c.path("long.pid"))
		_, e2 := os.Stat(c.path("proto.pid"))
		return e1 == nil && e2 == nil
	})
	pids := c.readPids("*.pid")
	id := c.status("last").ID

	db, err := sql.Open("sqlite", "file:"+c.db+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runs SET owner_token = 'another-process' WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// A hang guard, not a measure: the owner notices at its next heartbeat.
	if code := owner.wait(60 * time.Second); code != 1 {
		t.Errorf("orch run exited %d after losing its lease, want 1\n%s", code, owner.output())
	}
	stderr := owner.stderr.String()
	for _, want := range []string{"run " + id + " could not be recorded", "lease lost: run " + id + " is now owned by", "every agent was stopped", "orch status " + id} {
		if !strings.Contains(stderr, want) {
			t.Errorf("orch run's stderr does not say %q\n%s", want, owner.output())
		}
	}
	t.Logf("orch run said:\n%s", stderr)
	c.waitFor(10*time.Second, "the agents to be gone", func() bool { return len(c.alive(pids)) == 0 })
	integrityCheck(t, c.db)
}

// TestControlDiskFull: the database's disk fills up while an agent chatters.
// orch stops the agent and exits 1 saying the disk is full and how to go
// on; the database is intact, and once there is room orch resume finishes
// the run. It needs a small tmpfs: root only.
func TestControlDiskFull(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	disk := c.path("disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs for the database needs root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs for the database: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", disk).Run() })
	old := "ORCH_DB=" + c.db
	c.db = filepath.Join(disk, "orch.db")
	for i, kv := range c.env {
		if kv == old {
			c.env[i] = "ORCH_DB=" + c.db
		}
	}
	file := c.write("cuelist.yaml", `
cuelist:
  id: full
  defaults: {kill_grace: 1s}
  cues:
    - {id: CHATTY, agents: [chatty]}
---
agent:
  id: chatty
  command: [sh, -c, 'echo $$ > "@DIR@/chatty.pid"; while [ ! -e "@DIR@/done" ]; do head -c 1000 /dev/zero | tr "\0" x; echo; sleep 0.01; done']
`)
	owner := c.start("run", file)
	c.waitInGo(owner, 30*time.Second, "CHATTY")
	c.waitFor(10*time.Second, "the agent to write its pid", func() bool { _, err := os.Stat(c.path("chatty.pid")); return err == nil })
	pids := c.readPids("chatty.pid")
	id := c.status("last").ID

	// Fill what is left of the disk.
	filler := filepath.Join(disk, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()

	if code := owner.wait(60 * time.Second); code != 1 { // a hang guard, not a measure
		t.Errorf("orch run exited %d with its disk full, want 1\n%s", code, owner.output())
	}
	stderr := owner.stderr.String()
	for _, want := range []string{"run " + id + " could not be recorded", "disk is full", "orch resume " + id + " continues the run"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("orch run's stderr does not say %q\n%s", want, owner.output())
		}
	}
	c.waitFor(10*time.Second, "the agent to be gone", func() bool { return len(c.alive(pids)) == 0 })

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	integrityCheck(t, c.db)
	c.write("done", "")
	c.mustOrch(0, "resume", id)
	if st := c.status(id); st.State != "completed" {
		t.Errorf("after orch resume the run is %s (%s), want completed", st.State, st.Reason)
	}
}
