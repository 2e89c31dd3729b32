//go:build temporal_e2e && linux

package temporal

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemporalWorktreeAcrossWorkers: two workers, each with its own clone
// of a shared bare repository (orch worker --git-remote), on queues of
// their own; a chain of two worktree cues, A on the first, B on the second.
// B sees A's commit (fetched from the remote), both branches and the run's
// result are on the remote, and orch status shows the run completed.
func TestTemporalWorktreeAcrossWorkers(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	orch := buildOrch(t, root, tmp)
	server := startDevServer(t, root, tmp)
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	remote := filepath.Join(tmp, "remote.git")
	git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", remote)
	seed := filepath.Join(tmp, "seed")
	git(tmp, "clone", "--quiet", remote, seed)
	files := map[string]string{
		"chain.yaml": "cuelist:\n  id: chain\n  include: [writer.yaml, reader.yaml]\n  cues:\n" +
			"    - {id: A, agents: [writer]}\n    - {id: B, agents: [reader], dependencies: [A]}\n",
		"writer.yaml": "agent: {id: writer, run: \"echo a > a.txt\", workspace: worktree, placement: {queue: one}}\n",
		"reader.yaml": "agent: {id: reader, run: \"test -f a.txt && echo b > b.txt\", workspace: worktree, placement: {queue: two}}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(seed, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(seed, "checkout", "--quiet", "-b", "main")
	git(seed, "add", "--all")
	git(seed, "commit", "--quiet", "-m", "the project")
	git(seed, "push", "--quiet", "origin", "main")
	clone1, clone2 := filepath.Join(tmp, "w1"), filepath.Join(tmp, "w2")
	git(tmp, "clone", "--quiet", remote, clone1)
	git(tmp, "clone", "--quiet", remote, clone2)

	db := filepath.Join(tmp, "runs.db")
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+server.addr,
		"PATH="+filepath.Dir(orch)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ORCH_ENGINE=", "ORCH_DB=", "ORCH_GIT_REMOTE=")
	startProc(t, tmp, "worker1", env, clone1, orch, "worker", "--root", clone1, "--git-remote", remote)
	startProc(t, tmp, "worker1q", env, clone1, orch, "worker", "--root", clone1, "--git-remote", remote, "--queue", "one")
	startProc(t, tmp, "worker2q", env, clone2, orch, "worker", "--root", clone2, "--git-remote", remote, "--queue", "two")
	run := orchIn(t, orch, seed, env)
	if out, code := run("run", "--engine", "temporal", "--db", db, "chain.yaml"); code != 2 || !strings.Contains(out, "--git-remote URL") {
		t.Fatalf("without a remote: exit %d, want 2 and the reason:\n%s", code, out)
	}
	follow := startProc(t, tmp, "run", env, seed, orch, "run", "--engine", "temporal", "--db", db, "--git-remote", remote, "chain.yaml")
	if code := follow.wait(t); code != 0 {
		t.Fatalf("orch run: exit %d", code)
	}
	id := runID(t, run, db)
	if st := normalStatus(t, run, db, id); st.State != "completed" {
		t.Fatalf("run %s: %s", id, st.State)
	}
	a := git(remote, "rev-parse", "refs/heads/orch/"+id+"/A/1")
	b := git(remote, "rev-parse", "refs/heads/orch/"+id+"/B/1")
	if git(remote, "rev-parse", b+"^") != a {
		t.Errorf("B's commit %s is not on A's %s", b, a)
	}
	if tree := git(remote, "ls-tree", "--name-only", b); !strings.Contains(tree, "a.txt") || !strings.Contains(tree, "b.txt") {
		t.Errorf("B's tree: %s", tree)
	}
	if r := git(remote, "rev-parse", "refs/heads/orch/"+id+"/result"); r != b {
		t.Errorf("the result branch is at %s, want B's %s", r, b)
	}
	// A ran on the first worker, B on the second: each made its branch in its own clone.
	if _, err := exec.Command("git", "-C", clone2, "rev-parse", "--verify", "--quiet", "refs/heads/orch/"+id+"/A/1").Output(); err == nil {
		t.Errorf("A's branch was made in the second worker's clone")
	}
	git(clone1, "rev-parse", "--verify", "refs/heads/orch/"+id+"/A/1")
	git(clone2, "rev-parse", "--verify", "refs/heads/orch/"+id+"/B/1")
	// The follower fetched the run's branches where it was started: orch
	// land brings the result into the branch checked out there.
	if out, code := run("land", "--db", db, id); code != 0 {
		t.Fatalf("orch land %s: exit %d\n%s", id, code, out)
	}
	if head := git(seed, "rev-parse", "HEAD"); head != b {
		t.Errorf("after orch land, main is at %s, want B's %s", head, b)
	}
}
