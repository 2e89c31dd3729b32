package main

import (
	"database/sql"
	"os"
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
	for _, want := range []string{"run " + id + " could not be recorded", "another process owns the run now", "every agent was stopped", "orch status " + id} {
		if !strings.Contains(stderr, want) {
			t.Errorf("orch run's stderr does not say %q\n%s", want, owner.output())
		}
	}
	t.Logf("orch run said:\n%s", stderr)
	c.waitFor(10*time.Second, "the agents to be gone", func() bool { return len(c.alive(pids)) == 0 })
	integrityCheck(t, c.db)
}
