//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// continued checks a 202 reply to a POST that continues a run in the
// background, kills that orch's session when the test ends if it still
// runs, and returns its log file.
func continued(t *testing.T, code int, body string) string {
	t.Helper()
	m := regexp.MustCompile(`^continuing run \w+ in the background \(pid (\d+)\); its output goes to (.+)$`).
		FindStringSubmatch(jsonMessage(t, body))
	if code != 202 || m == nil {
		t.Fatalf("%d %s; want 202 continuing run ... in the background", code, body)
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }) // its own session: its group is its pid
	return m[2]
}

func jsonMessage(t *testing.T, body string) string {
	t.Helper()
	var v struct{ Message, Error string }
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v.Message + v.Error
}

// waitState polls GET /api/runs/ID until the run is in state.
func waitState(t *testing.T, url, state string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, body := get(t, url)
		if code == 200 && strings.Contains(body, `"state": "`+state+`",`+"\n"+`  "`) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s never showed %s: %d %s", url, state, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runID is the run orch run recorded in the database at path.
func lastRun(t *testing.T, url string) string {
	t.Helper()
	code, body := get(t, url+"/api/runs/last")
	var r struct{ ID string }
	if err := json.Unmarshal([]byte(body), &r); code != 200 || err != nil {
		t.Fatalf("GET /api/runs/last: %d %s", code, body)
	}
	return r.ID
}

// TestServeRetry: a failed run, its cause fixed, POST retry continues it in
// the background (an orch retry of its own, detached) to completion; then
// retry is refused as orch retry refuses it (nothing to run again), and so
// is a run whose owner is alive.
func TestServeRetry(t *testing.T) {
	dir := writeFiles(t, map[string]string{"cuelist.yaml": `cuelist:
  id: fragile
  cues:
    - {id: FETCH, agents: [ok]}
    - {id: BUILD, agents: [flaky], dependencies: [FETCH]}
---
agent: {id: ok, command: ["true"]}
---
agent: {id: flaky, command: [sh, -c, "test -f fixed"]}
`})
	db := filepath.Join(dir, ".orch", "orch.db")
	if code, out, errOut := runOrch(t, dir, "--db", db, "run", "cuelist.yaml"); code != 1 {
		t.Fatalf("orch run: exit %d\n%s%s", code, out, errOut)
	}
	srv := serveDB(t, db, "")
	id := lastRun(t, srv.URL)
	if err := os.WriteFile(filepath.Join(dir, "fixed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, body := post(t, srv.URL+"/api/runs/"+id+"/retry", "")
	logPath := continued(t, code, body)
	if want := filepath.Join(dir, ".orch", "serve-"+id+".log"); logPath != want {
		t.Errorf("log %s, want %s", logPath, want)
	}
	got := waitState(t, srv.URL+"/api/runs/"+id, "completed")
	if !strings.Contains(got, `"id": "BUILD",`+"\n"+`      "state": "completed"`) {
		t.Errorf("after the retry: %s", got)
	}
	if code, body := post(t, srv.URL+"/api/runs/"+id+"/retry", ""); code != 409 ||
		!strings.Contains(body, "is completed: nothing to run again") {
		t.Errorf("retry of a completed run: %d %s; want 409 as orch retry says", code, body)
	}
	waitLog(t, logPath, "completed")

	live, w := serveFixture(t, "")
	appendEvents(t, w, `{"run_id":"r7","type":"run/started","data":{"cuelist":"l","cues":[{"id":"A","agents":["a"]}],`+liveOwner()+`}}`)
	if code, body := post(t, live.URL+"/api/runs/r7/retry", ""); code != 409 || !strings.Contains(body, "run r7 is running: process") {
		t.Errorf("retry of a running run: %d %s; want 409", code, body)
	}
}

// waitLog waits until the background orch's log has what (it writes its
// last lines after the run's last event).
func waitLog(t *testing.T, path, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), what) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log %s never said %q:\n%s", path, what, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeGoPaused: orch run exits 3, paused at a manual cue; the inbox
// shows the cue, the run shows its DAG, and POST go continues the run in
// the background to completion.
func TestServeGoPaused(t *testing.T) {
	dir := writeFiles(t, map[string]string{"cuelist.yaml": `cuelist:
  id: release
  cues:
    - {id: BUILD, agents: [ok]}
    - {id: DEPLOY, agents: [ok], dependencies: [BUILD], go: manual}
---
agent: {id: ok, command: ["true"]}
`})
	db := filepath.Join(dir, ".orch", "orch.db")
	if code, out, errOut := runOrch(t, dir, "--db", db, "run", "cuelist.yaml"); code != 3 {
		t.Fatalf("orch run: exit %d\n%s%s", code, out, errOut)
	}
	srv := serveDB(t, db, "")
	id := lastRun(t, srv.URL)
	code, body := get(t, srv.URL+"/api/runs/"+id)
	if code != 200 || !strings.Contains(body, `"state": "paused"`) ||
		!regexp.MustCompile(`"id": "DEPLOY",[^{}]*"after": \[\s+"BUILD"\s+\]`).MatchString(body) {
		t.Fatalf("the paused run: %d %s", code, body)
	}
	if code, body := get(t, srv.URL+"/api/inbox"); code != 200 || !strings.Contains(body, `{"run":"`+id+`","kind":"go","id":"DEPLOY","cue":"DEPLOY"`) {
		t.Errorf("inbox: %d %s", code, body)
	}
	if code, body := post(t, srv.URL+"/api/runs/"+id+"/go", `{"cue":"NOPE"}`); code != 400 || !strings.Contains(body, `has no cue \"NOPE\"`) {
		t.Errorf("go for no such cue: %d %s", code, body)
	}
	code, body = post(t, srv.URL+"/api/runs/"+id+"/go", `{"cue":"DEPLOY"}`)
	logPath := continued(t, code, body)
	waitState(t, srv.URL+"/api/runs/"+id, "completed")
	if code, body := get(t, srv.URL+"/api/inbox"); code != 200 || body != "[]" {
		t.Errorf("inbox after GO: %d %s", code, body)
	}
	waitLog(t, logPath, "completed")
}
