//go:build unix

package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/serve"
)

// listTemporal serves a database holding one run on Temporal that nobody
// follows, with an orch-temporal whose sync records its call and brings the
// store up to date as the workflow would have it (the run is paused,
// waiting for GO), or fails as an unreachable server does (FAKE_SYNC=fail).
func listTemporal(t *testing.T, id string) (url string, syncs func() int, notices func() []string) {
	t.Helper()
	dbFile := recordTemporalRun(t, id)
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(dir, "orch-fixture")); err != nil {
		t.Fatal(err)
	}
	paused := filepath.Join(dir, "paused.jsonl")
	if err := os.WriteFile(paused, []byte(`{"run_id":"`+id+`","type":"run/state","state":"paused","reason":"waiting for GO: CUE-300"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$1\" >> " + calls + "\n" +
		"[ \"$FAKE_SYNC\" = fail ] && { echo 'orch: connecting to Temporal at 10.0.0.5:7233: context deadline exceeded' >&2; exit 1; }\n" +
		"ORCH_DB=" + dbFile + " exec " + filepath.Join(dir, "orch-fixture") + " events " + paused + "\n"
	if err := os.WriteFile(filepath.Join(dir, "orch-temporal"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	ctl := control.New(control.Config{DB: dbFile})
	var mu sync.Mutex
	var said []string
	ctl.Notice = func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		said = append(said, msg)
	}
	if _, err := ctl.Reader(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	s := serve.New(serve.Options{Control: ctl})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.Close(); srv.Close() })
	return srv.URL, func() int {
			b, _ := os.ReadFile(calls)
			return strings.Count(string(b), "sync\n")
		}, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), said...)
		}
}

// listedState is the state and reason GET /api/runs gives run id.
func listedState(t *testing.T, url, id string) (state, reason string) {
	t.Helper()
	code, body := get(t, url+"/api/runs")
	var runs []control.RunSummary
	if code != 200 || json.Unmarshal([]byte(body), &runs) != nil {
		t.Fatalf("GET /api/runs: %d %s", code, body)
	}
	for _, r := range runs {
		if r.ID == id {
			return r.State, r.Reason
		}
	}
	t.Fatalf("run %s not in GET /api/runs: %s", id, body)
	return "", ""
}

// TestServeListCatchesUpTemporalRuns: orch serve's run list shows a
// Temporal run nobody follows (nobody opened it either) as its workflow has
// it: the list catches it up first, at most once a second however often it
// is read.
func TestServeListCatchesUpTemporalRuns(t *testing.T) {
	const id = "20261126-aaaa"
	url, syncs, notices := listTemporal(t, id)
	start := time.Now()
	for range 5 {
		if state, reason := listedState(t, url, id); state != "paused" || reason != "waiting for GO: CUE-300" {
			t.Fatalf("listed %s (%s), want paused as its workflow has it", state, reason)
		}
	}
	if n := syncs(); n < 1 || (time.Since(start) < time.Second && n != 1) {
		t.Fatalf("%d catch-ups for 5 lists read", n)
	}
	time.Sleep(1100 * time.Millisecond)
	before := syncs()
	listedState(t, url, id)
	if syncs() != before+1 {
		t.Fatalf("no catch-up a second later: %d then %d", before, syncs())
	}
	if said := notices(); len(said) != 0 {
		t.Errorf("notices %q", said)
	}
}

// An unreachable server leaves the run as the store has it, says so once,
// and is not asked again at every list.
func TestServeListLeavesAnUnreachableRun(t *testing.T) {
	const id = "20261126-bbbb"
	t.Setenv("FAKE_SYNC", "fail")
	url, syncs, notices := listTemporal(t, id)
	for range 5 {
		if state, reason := listedState(t, url, id); state != "running" || !strings.Contains(reason, "followed by nobody") {
			t.Fatalf("listed %s (%s), want running, followed by nobody", state, reason)
		}
	}
	time.Sleep(1100 * time.Millisecond)
	listedState(t, url, id)
	if n := syncs(); n != 1 {
		t.Errorf("%d catch-ups of a run whose server could not be reached, want 1 (the next is 15 s later)", n)
	}
	said := notices()
	if len(said) != 1 || !strings.Contains(said[0], "run "+id+" on Temporal (10.0.0.5:7233) could not be brought up to date") || !strings.Contains(said[0], "context deadline exceeded") {
		t.Errorf("notices %q, want one naming the run and why", said)
	}
}
