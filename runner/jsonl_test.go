//go:build unix

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/orch-cli/orch/internal/fakeagent"
	"github.com/orch-cli/orch/internal/scriptagent"
	"github.com/orch-cli/orch/runner/record"
)

// TestMain lets the test binary be a scripted jsonl agent: with
// ORCH_FAKE_AGENT=1 it runs fakeagent instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("ORCH_FAKE_AGENT") == "1" {
		os.Exit(fakeagent.Main(os.Args[1:]))
	}
	if os.Getenv("ORCH_SCRIPT_AGENT") == "1" {
		os.Exit(scriptagent.Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeAgent returns an agent document running the fake agent in mode.
func fakeAgent(t *testing.T, id string, args ...string) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{fmt.Sprintf("%q", self)}
	for _, a := range args {
		argv = append(argv, fmt.Sprintf("%q", a))
	}
	return fmt.Sprintf("agent: {id: %s, protocol: jsonl, command: [%s], env: {ORCH_FAKE_AGENT: \"1\"}}\n", id, strings.Join(argv, ", "))
}

func TestJSONLHappyPathAndBlackboard(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  inputs: {name: world}
  cues:
    - {id: ONE, agents: [echo]}
    - {id: TWO, agents: [board], dependencies: [ONE]}
`,
		"agents.yaml": fakeAgent(t, "echo", "ok") + "---\n" + fakeAgent(t, "board", "blackboard"),
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	var types []string
	for _, e := range rec.of(record.EvMessage) {
		if e.Cue == "ONE" {
			var d record.MessageData
			asData(e.Data, &d)
			types = append(types, d.Direction+":"+d.Type)
		}
	}
	want := "out:coord.warning in:ack.warning out:coord.standby in:ack.standby out:coord.go in:task.complete"
	if strings.Join(types, " ") != want {
		t.Errorf("messages:\n%s\nwant\n%s", strings.Join(types, " "), want)
	}
	e, ok, _ := rec.BlackboardRead(t.Context(), res.RunID, "fake_note_TWO")
	if !ok || e.Author != "board" || e.Version != 1 {
		t.Errorf("blackboard: %+v %v", e, ok)
	}
}

func TestPythonEchoAgent(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	script, _ := filepath.Abs("../examples/protocol/agents/echo_agent.py")
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + "  inputs: {greeting: hi}\n  cues:\n    - {id: ECHO, agents: [py]}\n",
		"agents.yaml":  fmt.Sprintf("agent: {id: py, protocol: jsonl, command: [python3, %q]}\n", script),
	})
	rec := newMemRecorder()
	if res := runPlan(t, p, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
}

// TestAgentFaults: each fault is classified, with a reason, and leaves no
// process behind. Only the timeout a case is about is short: the others are
// long enough for a loaded machine (a 10 MiB line under the race detector
// takes a while to write).
func TestAgentFaults(t *testing.T) {
	const long = "ack_timeout: 1m, timeout: 10m"
	tests := []struct {
		mode     string
		timeouts string
		class    string
		reason   string
	}{
		{"silent-warning", "ack_timeout: 300ms, timeout: 10m", "malfunction", "no ack.warning within 300ms of coord.warning"},
		{"wrong-reply", long, "malfunction", "expected ack.warning in reply to coord.warning, got ack.standby"},
		{"garbage", long, "malfunction", "line 1 from the agent is not a protocol message: not JSON"},
		{"bad-utf8", long, "malfunction", "line 3 from the agent is not a protocol message: not JSON: invalid UTF-8 at byte offset"},
		{"huge-line", long, "malfunction", "line 1 from the agent is not a protocol message: line longer than 1048576 bytes"},
		{"other-cue", long, "malfunction", "reply for cue SOMETHING-ELSE"},
		{"exit-in-go", long, "exit:3", "the agent exited with status 3 while serving its cues, during GO"},
		{"hang-in-go", "ack_timeout: 1m, timeout: 500ms", "timeout", "no task.complete or task.failed within 500ms (GO timeout)"},
		{"fail", long, "failed", "the agent failed: the fake agent was told to fail"},
		// It sends requests and never reads the replies: the replies cannot
		// be written, and the run must end all the same.
		{"flood-unread", long, "malfunction", "the agent has not read its stdin"},
		{"close-stdout", long, "malfunction", "the agent closed its output while still running, during GO"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "child.pid")
			p, _ := project(t, map[string]string{
				"cuelist.yaml": agentsHead + "  defaults: {" + tt.timeouts + "}\n  cues:\n    - {id: C, agents: [fake]}\n",
				"agents.yaml":  fakeAgent(t, "fake", tt.mode, pidFile),
			})
			rec := newMemRecorder()
			res := runPlan(t, p, rec, nil)
			if res.State != record.RunFailed {
				t.Fatalf("run %s", res.State)
			}
			ended := rec.of(record.EvAttemptEnded)
			var d record.AttemptEndedData
			asData(ended[0].Data, &d)
			if d.Class != tt.class || !strings.Contains(ended[0].Reason, tt.reason) {
				t.Errorf("attempt ended %s: %q, want %s: %q", d.Class, ended[0].Reason, tt.class, tt.reason)
			}
			if d.PID == 0 || alive(d.PID) {
				t.Errorf("agent pid %d still alive", d.PID)
			}
			if b, err := os.ReadFile(pidFile); err == nil {
				if pid := atoi(strings.TrimSpace(string(b))); alive(pid) {
					t.Errorf("background child %d still alive", pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

func TestRetriableTaskFailedRetries(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + "  cues:\n    - {id: C, agents: [fake]}\n",
		"agents.yaml":  strings.Replace(fakeAgent(t, "fake", "fail-retriable"), "}\n", ", retry: {max_attempts: 2, backoff: 10ms}}\n", 1),
	})
	rec := newMemRecorder()
	runPlan(t, p, rec, nil)
	if n := len(rec.of(record.EvAttemptEnded)); n != 2 {
		t.Errorf("%d attempts, want 2 (task.failed retriable is retried)", n)
	}
}
