//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// binaries makes the test binary callable as orch and script-agent (testscript
// dispatches on the program name) and returns the directory to put on PATH.
func binaries(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"orch", "script-agent"} {
		if err := os.Symlink(self, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// floodRun runs a one-cue cuelist whose agent sends n message.user as fast as
// it can, and returns orch's peak RSS (KiB), its output and the database.
// While it runs, orch status must answer.
func floodRun(t *testing.T, bin string, n, rate int) (maxRSS int64, out string, db string) {
	t.Helper()
	dir := t.TempDir()
	db = filepath.Join(dir, "orch.db")
	cuelist := `cuelist:
  id: flood
  guardrails: {message_rate: ` + itoa(rate) + `}
  defaults: {timeout: 5m}
  cues:
    - {id: FLOOD, agents: [chatty], inputs: {script: [{flood: ` + itoa(n) + `}]}}
---
agent: {id: chatty, protocol: jsonl, command: [script-agent]}
`
	if err := os.WriteFile(filepath.Join(dir, "cuelist.yaml"), []byte(cuelist), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "ORCH_DB="+db)
	var stdout bytes.Buffer
	cmd := exec.Command(filepath.Join(bin, "orch"), "run", "cuelist.yaml")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &stdout, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	statuses := 0
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("orch run: %v\n%s", err, stdout.String())
			}
			waiting = false
		case <-time.After(300 * time.Millisecond):
			st := exec.Command(filepath.Join(bin, "orch"), "status", "last")
			st.Env = env
			if o, err := st.CombinedOutput(); err != nil && !strings.Contains(string(o), "no runs") {
				t.Errorf("orch status during the flood: %v\n%s", err, o)
			}
			statuses++
		}
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, stdout.String(), db
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestFloodIsThrottledAndBounded: an agent that sends 10,000 messages as
// fast as it can is throttled (guard warnings), every message is recorded,
// orch status answers meanwhile, and orch's memory does not grow with the
// flood: its peak RSS stays within 30 MiB of a run of 100 messages.
func TestFloodIsThrottledAndBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10,000-message run")
	}
	bin := binaries(t)
	n, rate := 10000, 2000
	if raceDetector {
		// The race detector slows orch's reading below 2,000 messages a
		// second (nothing to throttle) and multiplies its memory: the
		// flood is slower and the memory is not compared.
		n, rate = 600, 100
	}
	baseRSS, _, _ := floodRun(t, bin, 100, rate)
	rss, out, dbPath := floodRun(t, bin, n, rate)
	if want := "guard: chatty sends more than " + itoa(rate) + " messages a second: throttled"; !strings.Contains(out, want) {
		t.Errorf("no throttling warning %q:\n%s", want, out[:min(len(out), 2000)])
	}
	if rss > baseRSS+30*1024 && !raceDetector {
		t.Errorf("orch's peak RSS was %d KiB with %d messages, %d KiB with 100", rss, n, baseRSS)
	}
	t.Logf("peak RSS: %d KiB (100 messages: %d KiB)", rss, baseRSS)
	db, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	id, _ := db.ResolveRun(ctx, "last")
	events, err := db.Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, e := range events {
		if e.Type == record.EvUserMessage {
			users++
		}
	}
	if users != n {
		t.Errorf("%d of %d messages recorded", users, n)
	}
}
