//go:build clis_e2e && linux

package clis

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orch-cli/orch/internal/mockmodel"
)

// TestClaudeOnTemporalWorker runs claude-code (on the mock model) on an
// orch worker of a Temporal dev server: the CLI gets orch's MCP server from
// the worker, its ask tool reaches the person through the run's workflow,
// orch answer answers it, and the answer comes back through the CLI's
// reply into the cue's outputs.
func TestClaudeOnTemporalWorker(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	w := newWorld(t, map[string]mockmodel.Script{"ask": askScript}, false)
	w.env = append(w.env, "TEMPORAL_ADDRESS="+temporalServer(t))
	w.write(map[string]string{"cuelist.yaml": `cuelist:
  id: asks-on-temporal
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m}
  cues:
    - {id: CHOOSE, agents: [chooser]}
    - {id: AFTER, agents: [after], dependencies: [CHOOSE]}
---
agent:
  id: after
  command: ["true"]
---
` + chooser}, false)
	stopWorker := startWorker(t, w, "--root", w.dir)

	run := w.start("run", "--engine", "temporal", "cuelist.yaml")
	q := run.question(t, w, "q1")
	contains(t, "q1", q, "Which database should slugs live in?")
	if r := w.orch("answer", "last", "q1", "postgres"); r.code != 0 {
		t.Fatalf("orch answer q1 postgres exited %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if code := run.wait(t); code != 0 {
		t.Fatalf("orch run --engine temporal exited %d\n%s\nlogs:\n%s\nthe model's requests:\n%s", code, run.out(), w.orch("logs", "last").stdout, describe(w.scripted("ask")))
	}
	if got := calls(w, "ask"); !slices.Equal(got, []string{"mcp__orch__ask"}) {
		t.Errorf("claude called %v, want mcp__orch__ask\n%s", got, describe(w.scripted("ask")))
	}
	out := w.cueOutputs()["CHOOSE"]
	if out["database"] != "postgres" {
		t.Errorf("CHOOSE's outputs: %v, want database postgres (the person's answer, through claude's reply)", out)
	}
	stopWorker()
	w.noneLeft()
}

// startWorker starts orch worker with args in the world (its output shown
// when the test fails) and returns what stops it (also done at the test's
// end): SIGTERM to its process group, SIGKILL past patience.
func startWorker(t *testing.T, w *world, args ...string) (stop func()) {
	t.Helper()
	worker := exec.Command(orchBin, append([]string{"worker"}, args...)...)
	worker.Dir, worker.Env = w.dir, w.env
	worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var wlog strings.Builder
	worker.Stdout, worker.Stderr = &wlog, &wlog
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() {
		_ = syscall.Kill(-worker.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = worker.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(patience):
			_ = syscall.Kill(-worker.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	t.Cleanup(func() {
		if worker.ProcessState == nil {
			stop()
		}
		if t.Failed() {
			t.Logf("orch worker %s:\n%s", strings.Join(args, " "), wlog.String())
		}
	})
	return stop
}

// TestCLIsMergedOnTemporalWorkers: codex exec on one worker and claude -p
// on another, each with its own clone of a shared bare repository, write a
// file each in their worktrees; REVIEW, depending on both, starts from the
// merge of their branches, made by a worker and pushed to the remote.
func TestCLIsMergedOnTemporalWorkers(t *testing.T) {
	file := func(path, content string) *mockmodel.File { return &mockmodel.File{Path: path, Content: content} }
	w := newWorld(t, map[string]mockmodel.Script{
		"code": {
			{Text: "Writing the code.", Write: file("slug.py", "def slugify(title):\n    return '-'.join(title.lower().split())\n"), InputTokens: 20, OutputTokens: 10},
			{Text: "Done.\n{\"summary\": \"slug.py\"}", InputTokens: 25, OutputTokens: 5},
		},
		"tests": {
			{Text: "Writing the tests.", Write: file("test_slug.py", "from slug import slugify\nassert slugify('A B') == 'a-b'\n"), InputTokens: 20, OutputTokens: 10},
			{Text: "Done.\n{\"summary\": \"test_slug.py\"}", InputTokens: 25, OutputTokens: 5},
		},
	}, false)
	w.env = append(w.env, "TEMPORAL_ADDRESS="+temporalServer(t))
	w.write(map[string]string{"cuelist.yaml": `cuelist:
  id: merged-on-workers
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m, merge: {on_conflict: fail, verify: [python3, test_slug.py]}}
  cues:
    - {id: CODE, agents: [coder]}
    - {id: TESTS, agents: [tester]}
    - {id: REVIEW, agents: [reviewer], dependencies: [CODE, TESTS]}
---
agent:
  id: coder
  protocol: codex
  workspace: worktree
  placement: {queue: one}
  prompt: |
    ` + mockmodel.Marker("code") + ` Write slug.py.
  permissions: {edit: allow, default: allow}
  provides: [text, summary]
---
agent:
  id: tester
  protocol: claude-code
  workspace: worktree
  placement: {queue: two}
  prompt: |
    ` + mockmodel.Marker("tests") + ` Write test_slug.py.
  permissions: {read: allow, edit: allow, default: deny}
  provides: [text, summary]
---
agent:
  id: reviewer
  run: test -f slug.py && test -f test_slug.py
  workspace: worktree
  placement: {queue: one}
`}, true)
	remote := filepath.Join(t.TempDir(), "remote.git")
	w.git("init", "-q", "--bare", "-b", "main", remote)
	w.git("push", "-q", remote, "main")
	clone1, clone2 := filepath.Join(t.TempDir(), "one"), filepath.Join(t.TempDir(), "two")
	w.git("clone", "-q", remote, clone1)
	w.git("clone", "-q", remote, clone2)
	stops := []func(){
		startWorker(t, w, "--root", clone1, "--git-remote", remote),
		startWorker(t, w, "--root", clone1, "--git-remote", remote, "--queue", "one"),
		startWorker(t, w, "--root", clone2, "--git-remote", remote, "--queue", "two"),
	}
	run := w.start("run", "--engine", "temporal", "--git-remote", remote, "cuelist.yaml")
	if code := run.wait(t); code != 0 {
		t.Fatalf("orch run --engine temporal exited %d\n%s\nlogs:\n%s", code, run.out(), w.orch("logs", "last").stdout)
	}
	s := w.status()
	review := s.attemptBranch(t, "REVIEW")
	id := strings.Split(review, "/")[1]
	merge := strings.TrimSpace(w.git("--git-dir", remote, "rev-parse", "refs/heads/orch/"+id+"/REVIEW/merge"))
	parents := strings.Fields(w.git("--git-dir", remote, "log", "-1", "--format=%P", merge))
	// REVIEW checked the files and left nothing: its branch is the merge.
	if len(parents) != 2 || strings.TrimSpace(w.git("--git-dir", remote, "rev-parse", review)) != merge {
		t.Errorf("REVIEW's branch %s is not on the merge %s of CODE's and TESTS' (parents %v)", review, merge, parents)
	}
	tree := w.git("--git-dir", remote, "ls-tree", "--name-only", merge)
	for _, f := range []string{"slug.py", "test_slug.py"} {
		if !strings.Contains(tree, f+"\n") {
			t.Errorf("the merge lacks %s:\n%s", f, tree)
		}
	}
	// Each CLI worked on its own worker: its branch was made in that clone only.
	for cue, clones := range map[string][2]string{"CODE": {clone1, clone2}, "TESTS": {clone2, clone1}} {
		b := "refs/heads/" + s.attemptBranch(t, cue)
		w.git("-C", clones[0], "rev-parse", "--verify", "--quiet", b)
		if exec.Command("git", "-C", clones[1], "rev-parse", "--verify", "--quiet", b).Run() == nil {
			t.Errorf("%s's branch was made in %s too", cue, clones[1])
		}
	}
	contains(t, "orch status", w.orch("status", "last").stdout, "orch/"+id+"/REVIEW/merge")
	for _, stop := range stops {
		stop()
	}
	w.noneLeft()
}

// temporalServer starts a Temporal dev server (scripts/temporal-dev.sh,
// cached once built) for the test, with orch-temporal built next to orch,
// and returns its address.
func temporalServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", filepath.Dir(orchBin)+string(os.PathSeparator), "./cmd/orch-temporal")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/orch-temporal: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	script, _ := filepath.Abs("../../scripts/temporal-dev.sh")
	dir := t.TempDir()
	out, err := exec.Command(script, "start", "--port", port, "--dir", dir).Output()
	if err != nil {
		t.Fatalf("temporal-dev.sh start: %v", err)
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", "--dir", dir).Run() })
	return strings.TrimSpace(string(out))
}
