//go:build temporal_e2e && linux

package temporal

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// worktreeSetup is a dev server and three workers sharing a bare
// repository: the first two with their own clone (clone1: the default queue
// and queue one; clone2: queue two), and the checkout (seed) the runs are
// started from, holding files.
type worktreeSetup struct {
	t                           *testing.T
	tmp, orch, remote, seed, db string
	clone1, clone2              string
	env                         []string
	run                         func(args ...string) (string, int)
}

func newWorktreeSetup(t *testing.T, files map[string]string) *worktreeSetup {
	root := repoRoot(t)
	s := &worktreeSetup{t: t, tmp: t.TempDir()}
	s.orch = buildOrch(t, root, s.tmp)
	server := startDevServer(t, root, s.tmp)
	s.remote = filepath.Join(s.tmp, "remote.git")
	s.git(s.tmp, "init", "--quiet", "--bare", "--initial-branch=main", s.remote)
	s.seed = filepath.Join(s.tmp, "seed")
	s.git(s.tmp, "clone", "--quiet", s.remote, s.seed)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(s.seed, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.git(s.seed, "checkout", "--quiet", "-b", "main")
	s.git(s.seed, "add", "--all")
	s.git(s.seed, "commit", "--quiet", "-m", "the project")
	s.git(s.seed, "push", "--quiet", "origin", "main")
	s.clone1, s.clone2 = filepath.Join(s.tmp, "w1"), filepath.Join(s.tmp, "w2")
	s.git(s.tmp, "clone", "--quiet", s.remote, s.clone1)
	s.git(s.tmp, "clone", "--quiet", s.remote, s.clone2)

	s.db = filepath.Join(s.tmp, "runs.db")
	s.env = append(os.Environ(),
		"TEMPORAL_ADDRESS="+server.addr,
		"PATH="+filepath.Dir(s.orch)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ORCH_ENGINE=", "ORCH_DB=", "ORCH_GIT_REMOTE=")
	startProc(t, s.tmp, "worker1", s.env, s.clone1, s.orch, "worker", "--root", s.clone1, "--git-remote", s.remote)
	startProc(t, s.tmp, "worker1q", s.env, s.clone1, s.orch, "worker", "--root", s.clone1, "--git-remote", s.remote, "--queue", "one")
	startProc(t, s.tmp, "worker2q", s.env, s.clone2, s.orch, "worker", "--root", s.clone2, "--git-remote", s.remote, "--queue", "two")
	s.run = orchIn(t, s.orch, s.seed, s.env)
	return s
}

func (s *worktreeSetup) git(dir string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// completes runs cuelist with the shared remote, follows it to its end and
// returns the run's id.
func (s *worktreeSetup) completes(cuelist string) string {
	t := s.t
	follow := startProc(t, s.tmp, "run", s.env, s.seed, s.orch, "run", "--engine", "temporal", "--db", s.db, "--git-remote", s.remote, cuelist)
	if code := follow.wait(t); code != 0 {
		t.Fatalf("orch run: exit %d", code)
	}
	id := runID(t, s.run, s.db)
	if st := normalStatus(t, s.run, s.db, id); st.State != "completed" {
		t.Fatalf("run %s: %s", id, st.State)
	}
	return id
}

// lands checks that orch land, where the run was started, brings the
// result (want) into the branch checked out there.
func (s *worktreeSetup) lands(id, want string) {
	s.t.Helper()
	if out, code := s.run("land", "--db", s.db, id); code != 0 {
		s.t.Fatalf("orch land %s: exit %d\n%s", id, code, out)
	}
	if head := s.git(s.seed, "rev-parse", "HEAD"); head != want {
		s.t.Errorf("after orch land, main is at %s, want %s", head, want)
	}
}

// notIn checks that the branch is not in the clone (made by another
// worker).
func (s *worktreeSetup) notIn(clone, branch string) {
	s.t.Helper()
	if _, err := exec.Command("git", "-C", clone, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output(); err == nil {
		s.t.Errorf("%s was made in %s", branch, clone)
	}
}

// TestTemporalWorktreeAcrossWorkers: two workers, each with its own clone
// of a shared bare repository (orch worker --git-remote), on queues of
// their own; a chain of two worktree cues, A on the first, B on the second.
// B sees A's commit (fetched from the remote), both branches and the run's
// result are on the remote, and orch status shows the run completed.
func TestTemporalWorktreeAcrossWorkers(t *testing.T) {
	s := newWorktreeSetup(t, map[string]string{
		"chain.yaml": "cuelist:\n  id: chain\n  include: [writer.yaml, reader.yaml]\n  cues:\n" +
			"    - {id: A, agents: [writer]}\n    - {id: B, agents: [reader], dependencies: [A]}\n",
		"writer.yaml": "agent: {id: writer, run: \"echo a > a.txt\", workspace: worktree, placement: {queue: one}}\n",
		"reader.yaml": "agent: {id: reader, run: \"test -f a.txt && echo b > b.txt\", workspace: worktree, placement: {queue: two}}\n",
	})
	if out, code := s.run("run", "--engine", "temporal", "--db", s.db, "chain.yaml"); code != 2 || !strings.Contains(out, "--git-remote URL") {
		t.Fatalf("without a remote: exit %d, want 2 and the reason:\n%s", code, out)
	}
	id := s.completes("chain.yaml")
	a := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/A/1")
	b := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/B/1")
	if s.git(s.remote, "rev-parse", b+"^") != a {
		t.Errorf("B's commit %s is not on A's %s", b, a)
	}
	if tree := s.git(s.remote, "ls-tree", "--name-only", b); !strings.Contains(tree, "a.txt") || !strings.Contains(tree, "b.txt") {
		t.Errorf("B's tree: %s", tree)
	}
	if r := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/result"); r != b {
		t.Errorf("the result branch is at %s, want B's %s", r, b)
	}
	// A ran on the first worker, B on the second: each made its branch in its own clone.
	s.notIn(s.clone2, "orch/"+id+"/A/1")
	s.git(s.clone1, "rev-parse", "--verify", "refs/heads/orch/"+id+"/A/1")
	s.git(s.clone2, "rev-parse", "--verify", "refs/heads/orch/"+id+"/B/1")
	// The follower fetched the run's branches where it was started: orch
	// land brings the result into the branch checked out there.
	s.lands(id, b)
}

// fanInOnQueues is a cuelist: A (on queue one) and B (on queue two) work
// in worktrees with the shell lines a and b, C (queue one) with c from
// their merge, its merge: block merge; more are agents of its too.
func fanInOnQueues(merge, a, b, c string, more ...string) string {
	agent := func(id, run, queue string) string {
		return fmt.Sprintf("---\nagent: {id: %s, run: %q, workspace: worktree, placement: {queue: %s}}\n", id, run, queue)
	}
	return "cuelist:\n  id: fanin\n  cues:\n    - {id: A, agents: [wa]}\n    - {id: B, agents: [wb]}\n" +
		"    - {id: C, agents: [wc], dependencies: [A, B], merge: " + merge + "}\n" +
		agent("wa", a, "one") + agent("wb", b, "two") + agent("wc", c, "one") + strings.Join(more, "")
}

// TestTemporalFanInAcrossWorkers: A works on the first worker, B on the
// second, C depends on both: a worker merges their branches (fetching the
// one its clone lacks) as the local engine would, pushes the merge branch,
// and C, on the first worker, sees both commits; orch land brings the
// result in.
func TestTemporalFanInAcrossWorkers(t *testing.T) {
	s := newWorktreeSetup(t, map[string]string{
		"fanin.yaml": fanInOnQueues("{on_conflict: fail, verify: [sh, -c, 'test -f a.txt && test -f b.txt']}",
			"echo a > a.txt", "echo b > b.txt", "test -f a.txt && test -f b.txt && echo c > c.txt"),
	})
	id := s.completes("fanin.yaml")
	a := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/A/1")
	b := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/B/1")
	merge := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/C/merge")
	if parents := s.git(s.remote, "log", "-1", "--format=%P", merge); parents != a+" "+b {
		t.Errorf("the merge's parents %q, want A's and B's %s %s", parents, a, b)
	}
	c := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/C/1")
	if s.git(s.remote, "rev-parse", c+"^") != merge {
		t.Errorf("C's commit %s is not on the merge %s", c, merge)
	}
	if r := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/result"); r != c {
		t.Errorf("the result branch is at %s, want C's %s", r, c)
	}
	s.notIn(s.clone2, "orch/"+id+"/A/1")
	s.notIn(s.clone1, "orch/"+id+"/B/1")
	out, code := s.run("status", "--db", s.db, id)
	if code != 0 || !strings.Contains(out, "orch/"+id+"/C/merge") {
		t.Errorf("orch status (exit %d) does not list the merge's branch:\n%s", code, out)
	}
	s.lands(id, c)
}

// TestTemporalMergeAsksThePerson: A and B, on two workers, change the same
// file; C's merge (on_conflict: ask) stops at the conflict, keeps its
// worktree on the worker that made it and asks the person; nobody follows
// the run. The person resolves the conflict there, answers resolved; the
// merge goes on on that worker (its own queue), C works from it, and the
// run completes.
func TestTemporalMergeAsksThePerson(t *testing.T) {
	s := newWorktreeSetup(t, map[string]string{
		"fanin.yaml": fanInOnQueues("{on_conflict: ask}", "echo a > f.txt", "echo b > f.txt", "grep -q both f.txt && echo c > c.txt"),
	})
	if out, code := s.run("run", "--engine", "temporal", "--detach", "--db", s.db, "--git-remote", s.remote, "fanin.yaml"); code != 0 {
		t.Fatalf("orch run --detach: exit %d\n%s", code, out)
	}
	id := runID(t, s.run, s.db)
	wt := filepath.Join(s.clone1, ".orch", "worktrees", id, "C-merge")
	eventually(t, "no open question about C's merge in orch status", func() bool {
		q := openQuestion(t, s.run, s.db, id)
		return strings.Contains(q, "conflicts in f.txt") && strings.Contains(q, wt)
	})
	if err := os.WriteFile(filepath.Join(wt, "f.txt"), []byte("both\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := s.run("answer", "--db", s.db, id, "q1", "resolved"); code != 0 {
		t.Fatalf("orch answer %s q1: exit %d\n%s", id, code, out)
	}
	if out, code := s.run("resume", "--db", s.db, id); code != 0 {
		ev, _ := s.run("events", "--db", s.db, id)
		t.Fatalf("orch resume %s: exit %d\n%s\n%s", id, code, out, ev)
	}
	merge := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/C/merge")
	if f := s.git(s.remote, "show", merge+":f.txt"); f != "both" {
		t.Errorf("the merge's f.txt: %q, want the person's resolution", f)
	}
	c := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/C/1")
	if s.git(s.remote, "rev-parse", c+"^") != merge {
		t.Errorf("C's commit %s is not on the merge %s", c, merge)
	}
	if _, err := os.Stat(wt); err == nil {
		t.Errorf("the merge's worktree %s is left", wt)
	}
}

// TestTemporalMergeResolvedByAgent: A and B, on two workers, change the
// same file; C's merge goes to its resolver (on_conflict: agent), which
// works in the merge's worktree on the worker that made it (that worker's
// own queue); the merge goes on with its resolution and the run completes.
func TestTemporalMergeResolvedByAgent(t *testing.T) {
	s := newWorktreeSetup(t, map[string]string{
		"fanin.yaml": fanInOnQueues("{on_conflict: agent, agent: fixer}", "echo a > f.txt", "echo b > f.txt", "grep -q both f.txt && echo c > c.txt",
			"---\nagent: {id: fixer, run: \"grep -q '<<<<<<<' f.txt && pwd > ../fixer-was-in && echo both > f.txt\"}\n"),
	})
	id := s.completes("fanin.yaml")
	merge := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/C/merge")
	if f := s.git(s.remote, "show", merge+":f.txt"); f != "both" {
		t.Errorf("the merge's f.txt: %q, want the resolver's", f)
	}
	where, err := os.ReadFile(filepath.Join(s.clone1, ".orch", "worktrees", id, "fixer-was-in"))
	if err != nil || strings.TrimSpace(string(where)) != filepath.Join(s.clone1, ".orch", "worktrees", id, "C-merge") {
		t.Errorf("the resolver worked in %q (%v), not in the merge's worktree on the first worker", where, err)
	}
}
