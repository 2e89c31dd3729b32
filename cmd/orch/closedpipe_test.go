//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// closedPipe returns the writing end of a pipe whose reader has already
// gone, as after orch run ... | head -1: every write to it fails with EPIPE.
func closedPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// orchInto starts the real orch with its stdout into out (an *os.File is
// its very stdout); its stderr is kept in the returned buffer.
func orchInto(t *testing.T, dir, bin string, out io.Writer, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(bin, "orch"), args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, &stderr
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "ORCH_DB="+filepath.Join(dir, "orch.db"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// waitExit waits for cmd (generously: a hang fails the test, it does not
// block the suite) and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not end", strings.Join(cmd.Args, " "))
	}
	if !cmd.ProcessState.Exited() {
		t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), cmd.ProcessState)
	}
	return cmd.ProcessState.ExitCode()
}

// TestRunIntoClosedPipe: when the reader of orch run's output goes away,
// the run is not interrupted: it goes on to its end and is recorded, orch
// exits with the run's exit code, and only what it printed is lost.
func TestRunIntoClosedPipe(t *testing.T) {
	bin := binaries(t)
	dir := writeFiles(t, map[string]string{
		"ok.yaml": `cuelist:
  id: ok
  cues:
    - {id: A, agents: [writer]}
    - {id: B, agents: [writer], dependencies: [A]}
---
agent: {id: writer, run: "orch bb set \"k$ORCH_CUE_ID\" 1"}
`,
		"fails.yaml": `cuelist:
  id: fails
  cues:
    - {id: A, agents: [failing]}
---
agent: {id: failing, run: "exit 4"}
`,
	})
	t.Setenv("ORCH_DB", filepath.Join(dir, "orch.db"))
	for _, c := range []struct {
		cuelist, output string
		code            int
		state           string
	}{
		{"ok.yaml", "json", exitOK, `"state": "completed"`},
		{"ok.yaml", "text", exitOK, `"state": "completed"`},
		{"fails.yaml", "json", exitFailed, `"state": "failed"`},
	} {
		cmd, stderr := orchInto(t, dir, bin, closedPipe(t), "run", "--output", c.output, c.cuelist)
		if code := waitExit(t, cmd); code != c.code {
			t.Errorf("orch run --output %s %s into a closed pipe: exit %d, want %d; stderr:\n%s", c.output, c.cuelist, code, c.code, stderr)
		}
		if stderr.Len() > 0 {
			t.Errorf("orch run --output %s %s into a closed pipe wrote on stderr:\n%s", c.output, c.cuelist, stderr)
		}
		_, out, _ := runOrch(t, "", "status", "last", "--output", "json")
		if !strings.Contains(out, c.state) {
			t.Errorf("after orch run --output %s %s into a closed pipe, want %s in orch status:\n%s", c.output, c.cuelist, c.state, out)
		}
	}
}

// TestEventsFollowIntoClosedPipe: orch events --follow whose reader has gone
// ends at once, quietly and with exit 0, while the run goes on.
func TestEventsFollowIntoClosedPipe(t *testing.T) {
	bin := binaries(t)
	dir := writeFiles(t, map[string]string{
		"cuelist.yaml": `cuelist:
  id: slow
  cues:
    - {id: A, agents: [waiter]}
---
agent: {id: waiter, run: "touch started; while [ ! -e go-on ]; do sleep 0.05; done"}
`,
	})
	t.Setenv("ORCH_DB", filepath.Join(dir, "orch.db"))
	runCmd, runErr := orchInto(t, dir, bin, nil, "run", "cuelist.yaml")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not start")
		}
	}
	follow, stderr := orchInto(t, dir, bin, closedPipe(t), "events", "last", "--follow", "--output", "json")
	if code := waitExit(t, follow); code != exitOK || stderr.Len() > 0 {
		t.Errorf("orch events --follow into a closed pipe: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	_, out, _ := runOrch(t, "", "status", "last", "--output", "json")
	if !strings.Contains(out, `"state": "running"`) {
		t.Errorf("orch events --follow ended with the run, not at once:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "go-on"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, runCmd); code != exitOK {
		t.Errorf("orch run: exit %d; stderr:\n%s", code, runErr)
	}
}

// TestStatusWatchIntoClosedPipe: orch status --watch, which redraws until
// Ctrl-C when no run is named, ends once its reader has gone.
func TestStatusWatchIntoClosedPipe(t *testing.T) {
	bin := binaries(t)
	dir := writeFiles(t, map[string]string{"cuelist.yaml": "cuelist: {id: one, cues: [{id: A, agents: [ok]}]}\n---\nagent: {id: ok, command: [\"true\"]}\n"})
	t.Setenv("ORCH_DB", filepath.Join(dir, "orch.db"))
	if code, out, errs := runOrch(t, dir, "run", "cuelist.yaml"); code != exitOK {
		t.Fatalf("orch run: exit %d\n%s%s", code, out, errs)
	}
	watch, stderr := orchInto(t, dir, bin, closedPipe(t), "status", "--watch")
	if code := waitExit(t, watch); code != exitOK || stderr.Len() > 0 {
		t.Errorf("orch status --watch into a closed pipe: exit %d, want 0; stderr:\n%s", code, stderr)
	}
}
