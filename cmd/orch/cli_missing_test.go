//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingCLIFoundFirst: a claude-code or codex agent without command
// runs its CLI (claude, codex); when that is not in PATH, orch run says so
// with the other preflight checks, before anything starts (no run, no
// worktree), with the command that installs it.
func TestMissingCLIFoundFirst(t *testing.T) {
	self, err := exec.LookPath("orch") // the test binary as orch (TestMain)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin") // PATH: orch and sh, no claude, no codex
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"orch": self, "sh": "/bin/sh"} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	spec := `agent: {id: writer, protocol: claude-code, workspace: worktree}
---
agent: {id: coder, protocol: codex}
---
agent: {id: tester, command: [sh, -c, "true"]}
---
cuelist:
  id: team
  cues:
    - {id: t, agents: [tester]}
    - {id: w, agents: [writer], dependencies: [t]}
    - {id: c, agents: [coder], dependencies: [t]}
`
	if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "orch"), "run", "team.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin, "ORCH_DB="+filepath.Join(dir, ".orch", "orch.db"))
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("orch run: exit %d (%v), want 1\n%s", code, err, out)
	}
	for _, want := range []string{
		"cuelist team: no cue started: 2 agent program(s) cannot be started from here",
		`team.yaml:3:30: agent "coder": the program "codex" (protocol: codex runs it when there is no command) is not found in PATH (` + bin + `); install it with: npm install -g @openai/codex`,
		`team.yaml:1:31: agent "writer": the program "claude" (protocol: claude-code runs it when there is no command) is not found in PATH (` + bin + `); install it with: npm install -g @anthropic-ai/claude-code`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("orch run said\n%s\nwant a line with\n%s", out, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".orch")); err == nil {
		t.Errorf("a run was recorded, or a worktree made: .orch exists")
	}
}
