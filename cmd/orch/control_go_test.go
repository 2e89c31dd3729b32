//go:build linux

package main

import (
	"database/sql"
	"strings"
	"testing"
	"time"
)

// TestControlGoRacesStop: orch go for a manual cue standing by reaches the
// run in the same moment as a stop of the run. The stop wins, and orch go
// says so and exits 1 instead of "GO sent" (issue 27, item 14).
//
// The moment is one of the owner's command polls: when the owner took the
// stop before orch go queued its GO (orch go starting slowly on a loaded
// machine), orch go finds the run stopped and refuses at once, which is
// right but not the race; the scenario is tried again then, a few times.
func TestControlGoRacesStop(t *testing.T) {
	t.Parallel()
	for try := 1; ; try++ {
		if goRacesStop(t) {
			return
		}
		if try == 8 {
			t.Fatalf("the stop reached the run before orch go's GO %d times in a row", try)
		}
		t.Logf("try %d: the stop was taken before the GO was queued; again", try)
	}
}

// goRacesStop runs the scenario once; false: the race was missed.
func goRacesStop(t *testing.T) bool {
	c := newCtl(t)
	file := c.write("cuelist.yaml", `
cuelist:
  id: race
  defaults: {kill_grace: 1s, timeout: 10m}
  cues:
    - {id: LONG, agents: [long]}
    - {id: DEPLOY, agents: [deploy], go: manual}
---
agent:
  id: long
  command: [sh, -c, 'while :; do sleep 0.05; done']
---
agent:
  id: deploy
  command: [sh, -c, 'true']
`)
	owner := c.start("run", file)
	c.waitStates(owner, 30*time.Second, map[string]string{"LONG": "go", "DEPLOY": "standby"})
	id := c.status("last").ID
	// A stop queued as orch stop queues it, and at once the GO.
	db, err := sql.Open("sqlite", "file:"+c.db+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO commands (run_id, kind, cue_id, arg, created_at) VALUES (?, 'stop', '', 'from the test', ?)`,
		id, time.Now().UnixMicro()); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := c.orch("go", id, "DEPLOY")
	if code == 2 && (strings.Contains(stderr, "cue DEPLOY of run "+id+" is already stopped") || strings.Contains(stderr, "run "+id+" is stopped: nothing waits for GO")) {
		if code := owner.wait(60 * time.Second); code != 130 {
			t.Errorf("orch run exited %d, want 130 (stopped)\n%s", code, owner.output())
		}
		return false
	}
	if code != 1 || strings.Contains(stdout, "GO for DEPLOY sent") || !strings.Contains(stderr, "the GO for DEPLOY did not take effect: run "+id+" is stopped") {
		t.Errorf("orch go as the run was stopped: exit %d\n--- stdout\n%s--- stderr\n%s", code, stdout, stderr)
	}
	if code := owner.wait(60 * time.Second); code != 130 {
		t.Errorf("orch run exited %d, want 130 (stopped)\n%s", code, owner.output())
	}
	return true
}
