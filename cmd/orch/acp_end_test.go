//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestACPRunEndsAtOnce: the real ACP adapters (claude-code-acp, codex-acp)
// do not exit when their stdin closes, and neither does fake-acp. When orch
// ends an ACP process whose sessions are all over, it stops it after a short
// wait (acpIdleExit), not after kill_grace, which stays the grace of a stop
// during a turn: a one-cue run with a kill_grace of 2 minutes ends long
// before it, and leaves no process.
func TestACPRunEndsAtOnce(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "agent.pid")
	spec := `agent:
  id: coder
  protocol: acp
  command: [fake-acp, ok]
  env: {FAKE_ACP_PIDFILE: ` + strconv.Quote(pidfile) + `}
---
cuelist:
  id: one
  defaults: {kill_grace: 2m}
  cues:
    - {id: a, agents: [coder]}
`
	if err := os.WriteFile(filepath.Join(dir, "one.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("orch", "run", "one.yaml") // the test binary as orch (TestMain), fake-acp too
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ORCH_DB="+filepath.Join(dir, ".orch", "orch.db"))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("orch run: %v\n%s", err, out.String())
		}
	case <-time.After(time.Minute): // a deadline, far under the grace: the run waited it
		_ = cmd.Process.Kill()
		<-done
		if b, err := os.ReadFile(pidfile); err == nil { // orch killed: its agent is the test's to stop
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		t.Fatalf("the run did not end within a minute: its end waits kill_grace (2m) for an agent that does not exit on EOF\n%s", out.String())
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 || syscall.Kill(pid, 0) == nil {
		t.Errorf("the agent's process %d is left running", pid)
	}
}

// TestACPBigReply: an ACP agent's reply has no bound of its own; what orch
// keeps of it is: the output text is its last MiB (after a line saying how
// much was cut; the provides keys come from its end), the log is capped by
// defaults.max_log, and orch reads it in bounded memory. A 32 MiB reply made
// a database of 4 copies of it and an orch of about 10 times its size.
func TestACPBigReply(t *testing.T) {
	dir := t.TempDir()
	spec := `agent:
  id: big
  protocol: acp
  command: [fake-acp, big, "32"]
  provides: [text, summary]
---
cuelist:
  id: big
  cues:
    - {id: a, agents: [big]}
`
	if err := os.WriteFile(filepath.Join(dir, "big.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, ".orch", "orch.db")
	cmd := exec.Command("orch", "run", "big.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ORCH_DB="+db)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("orch run: %v\n%s", err, out)
	}
	// Under the race detector orch's memory is several times larger: the
	// bound is checked only without it.
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && !raceDetector && maxRSS(ru) > 160<<20 {
		t.Errorf("orch used %d MiB of memory for a 32 MiB reply", maxRSS(ru)>>20)
	}
	size := int64(0)
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(db + suffix); err == nil {
			size += fi.Size()
		}
	}
	if size > 24<<20 {
		t.Errorf("the database is %d MiB after a 32 MiB reply", size>>20)
	}
	code, out, _ := runOrch(t, dir, "status", "last", "--output", "json")
	var st struct {
		Cues []struct {
			Outputs map[string]any `json:"outputs"`
		} `json:"cues"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st.Cues) != 1 {
		t.Fatalf("orch status: %d\n%s", code, out)
	}
	text, _ := st.Cues[0].Outputs["text"].(string)
	if !strings.HasPrefix(text, "[… the first 31.0 MiB of the reply are cut here: see orch logs]\n") || len(text) > 1<<20+100 ||
		!strings.HasSuffix(text, `{"summary": "a reply of 32 MiB"}`) || st.Cues[0].Outputs["summary"] != "a reply of 32 MiB" {
		t.Errorf("the outputs: summary %v, text of %d bytes: %.100q…%q", st.Cues[0].Outputs["summary"], len(text), text, text[max(len(text)-40, 0):])
	}
}

// maxRSS is a finished process's peak resident memory in bytes (Linux
// counts it in KiB, macOS in bytes).
func maxRSS(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
