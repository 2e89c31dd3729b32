//go:build clis_e2e && linux

package clis

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch-cli/orch/internal/mockmodel"
)

// TestPermissionsByKind: a policy by tool kind answers the real adapters'
// permission requests, the edit allowed and the command denied.
// claude-code-acp (the former package) names no kind in its
// session/request_permission, only in the tool_call before it; it ends
// the turn when a tool is refused (so the agent provides text only).
func TestPermissionsByKind(t *testing.T) {
	for _, c := range []cli{claudeACP, legacyClaudeACP, geminiACP} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, map[string]mockmodel.Script{"work": writeShell}, c.legacy)
			cuelist := strings.Replace(oneCue(c, "workdir", "{read: allow, edit: allow, execute: deny, default: deny}"),
				"provides: [text, summary]", "provides: [text]", 1)
			files := map[string]string{"cuelist.yaml": cuelist}
			if c.existing {
				files["hello.txt"] = "to be replaced\n"
			}
			w.write(files, true)
			w.run("cuelist.yaml", 0)
			contains(t, "hello.txt", w.file("hello.txt"), helloText)
			if got := w.file("shell.txt"); got != "" {
				t.Errorf("the denied command ran: shell.txt holds %q", got)
			}
			events := w.orch("events", "last").stdout
			decided(t, events, "edit", "by the permissions policy")
			decided(t, events, "execute", "by the permissions policy")
		})
	}
}

// decided fails unless the run's events note a permission decision for a
// tool of kind, saying how.
func decided(t *testing.T, events, kind, how string) {
	t.Helper()
	for _, l := range strings.Split(events, "\n") {
		if strings.Contains(l, "permission for "+kind) && strings.Contains(l, how) {
			return
		}
	}
	t.Errorf("no permission for %s decided %s in the events:\n%s", kind, how, events)
}

// TestPermissionAsked: with default: ask, the real codex-acp's permission
// requests become questions answered with orch answer; an answer that
// names no option is refused at once, the question left open.
func TestPermissionAsked(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	t.Parallel()
	// codex-acp's own default mode lets its auto-reviewer (a model) decide;
	// read-only makes it ask the client before an edit, and a command the
	// model wants to run outside the sandbox.
	script := mockmodel.Script{
		{Text: "I will write hello.txt.", Write: &mockmodel.File{Path: "hello.txt", Content: helloText}, InputTokens: 100, OutputTokens: 20},
		{Text: "Now a command.", Shell: "echo shell was here > shell.txt", Escalate: true, InputTokens: 150, OutputTokens: 20},
		{Text: "Done.\n{\"summary\": \"asked twice\"}", InputTokens: 200, OutputTokens: 15},
	}
	w := newWorld(t, map[string]mockmodel.Script{"work": script}, false)
	asking := cli{name: "codex-acp", agent: "protocol: acp\n  command: [codex-acp]\n  env: {INITIAL_AGENT_MODE: read-only}"}
	w.write(map[string]string{"cuelist.yaml": oneCue(asking, "workdir", "{default: ask}")}, true)
	run := w.start("run", "cuelist.yaml")
	// The edit: its options are "Yes, proceed", "Yes, and don't ask again
	// ..." and "No, and tell Codex ...": "Yes" names two of them.
	q1 := run.question(t, w, "q1")
	contains(t, "q1", q1, "edit", "Yes, proceed")
	r := w.orch("answer", "last", "q1", "Yes")
	if r.code != 1 {
		t.Errorf("orch answer q1 Yes exited %d, want 1 (it names two options)\n%s%s", r.code, r.stdout, r.stderr)
	}
	contains(t, "orch answer q1 Yes", r.stdout+r.stderr, "Yes, proceed", "No, and tell Codex")
	if s := w.status(); len(s.Questions) != 1 || s.Questions[0].State != "open" {
		t.Errorf("after a refused answer, the questions are %+v, want q1 still open", s.Questions)
	}
	if r := w.orch("answer", "last", "q1", "yes, p"); r.code != 0 {
		t.Errorf("orch answer q1 'yes, p' exited %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The command outside the sandbox.
	q2 := run.question(t, w, "q2")
	contains(t, "q2", q2, "execute", "echo shell was here")
	if r := w.orch("answer", "last", "q2", "1"); r.code != 0 {
		t.Errorf("orch answer q2 1 exited %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if code := run.wait(t); code != 0 {
		t.Fatalf("orch run exited %d\n%s\nlogs:\n%s", code, run.out(), w.orch("logs", "last").stdout)
	}
	w.noneLeft()
	contains(t, "hello.txt", w.file("hello.txt"), helloText)
	contains(t, "shell.txt", w.file("shell.txt"), shellText)
	events := w.orch("events", "last").stdout
	decided(t, events, "edit", "answered by the person")
	decided(t, events, "execute", "answered by the person")
	usage(t, w, codexACP, w.status(), 450, 55)
}

// running is an orch command left running in the background.
type running struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when its output ended

	mu  sync.Mutex
	buf strings.Builder
}

// start starts orch in the project without waiting for it.
func (w *world) start(args ...string) *running {
	w.t.Helper()
	cmd := exec.Command(orchBin, args...)
	cmd.Dir, cmd.Env = w.dir, w.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	r := &running{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			r.mu.Lock()
			r.buf.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
		}
	}()
	w.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
		}
	})
	return r
}

// question waits for the run to ask the person question id and returns it
// as orch status has it.
func (r *running) question(t *testing.T, w *world, id string) string {
	t.Helper()
	deadline := time.Now().Add(patience)
	for time.Now().Before(deadline) {
		var s status
		if out := w.orch("status", "last", "--output", "json"); out.code == 0 && json.Unmarshal([]byte(out.stdout), &s) == nil {
			for _, q := range s.Questions {
				if q.ID == id && q.State == "open" {
					return q.Question
				}
			}
		}
		select {
		case <-r.done:
			t.Fatalf("orch ended before asking %s:\n%s", id, r.out())
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("orch did not ask %s within %s:\n%s", id, patience, r.out())
	return ""
}

// out is what the command printed so far.
func (r *running) out() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// wait waits for the command to end and returns its exit status.
func (r *running) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(patience):
		t.Fatalf("orch did not end within %s:\n%s", patience, r.out())
	}
	err := r.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestClaudeAsRoot checks the README's advice for root (a container):
// claude refuses --permission-mode bypassPermissions, what default: allow
// maps to, unless the agent has IS_SANDBOX=1; orch says so before the run
// starts.
func TestClaudeAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("claude's refusal is for root only: run as root to check it")
	}
	for name, env := range map[string]string{"plain": "", "IS_SANDBOX": "\n  env: {IS_SANDBOX: \"1\"}"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, map[string]mockmodel.Script{"work": writeShell}, false)
			w.write(map[string]string{"cuelist.yaml": strings.Replace(oneCue(claudeCode, "workdir", "{default: allow}"),
				"protocol: claude-code", "protocol: claude-code"+env, 1)}, false)
			if env == "" {
				r := w.run("cuelist.yaml", 1)
				contains(t, "orch run's refusal", r.stderr, "Claude Code refuses that as root unless IS_SANDBOX=1")
				return
			}
			w.run("cuelist.yaml", 0)
			contains(t, "hello.txt", w.file("hello.txt"), helloText)
			contains(t, "shell.txt", w.file("shell.txt"), shellText)
		})
	}
}
