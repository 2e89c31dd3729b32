package temporal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/record"
)

// gitT runs git in dir, failing the test on an error.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitwork.Git(context.Background(), dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@x", "-c", "init.defaultBranch=main"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sharedRemote makes a bare repository holding files (committed on main)
// and returns it with two clones of it, the workers' --root.
func sharedRemote(t *testing.T, files map[string]string) (remote, clone1, clone2 string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", t.TempDir())
	dir := t.TempDir()
	remote = filepath.Join(dir, "remote.git")
	gitT(t, dir, "init", "--quiet", "--bare", remote)
	seed := filepath.Join(dir, "seed")
	gitT(t, dir, "clone", "--quiet", remote, seed)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(seed, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, seed, "checkout", "--quiet", "-b", "main")
	gitT(t, seed, "add", "--all")
	gitT(t, seed, "commit", "--quiet", "-m", "the project")
	gitT(t, seed, "push", "--quiet", "origin", "main")
	clone1, clone2 = filepath.Join(dir, "w1"), filepath.Join(dir, "w2")
	gitT(t, dir, "clone", "--quiet", remote, clone1)
	gitT(t, dir, "clone", "--quiet", remote, clone2)
	return remote, clone1, clone2
}

// chainFiles: B works from A's branch (it needs A's file) and adds its own.
var chainFiles = map[string]string{
	"chain.yaml": "cuelist:\n  id: chain\n  include: [writer.yaml, reader.yaml]\n  cues:\n" +
		"    - {id: A, agents: [writer]}\n    - {id: B, agents: [reader], dependencies: [A]}\n",
	"writer.yaml": "agent: {id: writer, run: \"echo a > a.txt\", workspace: worktree}\n",
	"reader.yaml": "agent: {id: reader, run: \"test -f a.txt && echo b > b.txt\", workspace: worktree}\n",
}

// TestWorktreeChainThroughRemote: a chain of two worktree cues on a
// worker: each attempt's branch, named as locally, is committed and pushed
// to the shared remote, B starts from A's commit, and the run's result
// branch is pushed too; the workflow records the worktrees and the result.
func TestWorktreeChainThroughRemote(t *testing.T) {
	remote, root, other := sharedRemote(t, chainFiles)
	base := gitT(t, root, "rev-parse", "HEAD")
	evs := completed(t, runEnv(t, root), RunInput{RunID: r1, Path: "chain.yaml", SpecHash: specHashOf(t, root, "chain.yaml"),
		Git: &RunGit{Remote: remote, Base: base, BaseName: "main"}})
	a := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/A/1")
	b := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/B/1")
	if gitT(t, remote, "rev-parse", b+"^") != a || gitT(t, remote, "rev-parse", a+"^") != base {
		t.Errorf("B's commit %s is not on A's %s, on the base %s", b, a, base)
	}
	if files := gitT(t, remote, "ls-tree", "--name-only", b); !strings.Contains(files, "a.txt") || !strings.Contains(files, "b.txt") {
		t.Errorf("B's tree: %s", files)
	}
	if r := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/result"); r != b {
		t.Errorf("the result branch is at %s, want B's %s", r, b)
	}
	var worktrees []record.WorktreeData
	var result *record.ResultBranch
	for _, e := range evs {
		switch d := e.Data.(type) {
		case record.WorktreeData:
			worktrees = append(worktrees, d)
		case record.MergeData:
			if e.State == record.MergeCompleted {
				result = d.Result
			}
		}
		if e.Type == record.EvCueState && e.State == "completed" && e.Cue == "B" {
			out := e.Data.(record.CueStateData).Outputs
			if out["worktree_branch"] != "orch/"+r1+"/B/1" || out["worktree_commit"] != b {
				t.Errorf("B's outputs: %v", out)
			}
		}
	}
	if len(worktrees) != 3 || worktrees[0].Commit != a || worktrees[1].Base != a || worktrees[1].From != "A" || worktrees[1].Commit != b {
		t.Errorf("worktree events: %+v", worktrees)
	}
	if result == nil || result.Branch != "orch/"+r1+"/result" || result.Commit != b || result.Ahead != 2 || result.Base != "main" {
		t.Errorf("result: %+v", result)
	}
	if left, _ := os.ReadDir(filepath.Join(root, ".orch", "worktrees", r1)); len(left) != 0 {
		t.Errorf("worktrees left on the worker: %v", left)
	}

	// Another worker, whose clone has never seen A's branch, runs B's next
	// attempt: it fetches A's branch from the remote and pushes its own.
	var as testsuite.WorkflowTestSuite
	aenv := as.NewTestActivityEnvironment()
	aenv.RegisterActivityWithOptions((&Activities{Root: other}).Go, activity.RegisterOptions{Name: ActivityGo})
	if _, err := gitwork.Git(context.Background(), other, "rev-parse", "--verify", "--quiet", a+"^{commit}"); err == nil {
		t.Fatal("the other clone has A's commit already")
	}
	v, err := aenv.ExecuteActivity(ActivityGo, AttemptInput{RunID: r1, Path: "chain.yaml", SpecHash: specHashOf(t, other, "chain.yaml"), Cue: "B", Agent: "reader", Attempt: 2,
		Task: &attempt.Task{}, Worktree: &WorktreeInput{Remote: remote, Base: a, BaseBranch: "orch/" + r1 + "/A/1", From: "A", Branch: "orch/" + r1 + "/B/2"}})
	if err != nil {
		t.Fatal(err)
	}
	var got AttemptResult
	if err := v.Get(&got); err != nil || got.Failed {
		t.Fatalf("B's attempt 2 on the other worker: %v %+v", err, got)
	}
	b2 := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/B/2")
	if gitT(t, remote, "rev-parse", b2+"^") != a || got.Worktree == nil || got.Worktree.Commit != b2 {
		t.Errorf("B's attempt 2 pushed %s, result %+v", b2, got.Worktree)
	}
}

// jsonlWriter is a jsonl agent that, at GO, writes j.txt in its task's
// workspace and outputs where it worked.
const jsonlWriter = `import json, os, sys
for line in sys.stdin:
    msg = json.loads(line)
    kind, task = msg["message_type"], msg.get("task") or {}
    reply = {"coord.warning": "ack.warning", "coord.standby": "ack.standby"}.get(kind)
    out = {"message_type": reply, "id": "r" + msg["id"], "in_reply_to": msg["id"]}
    if kind == "coord.go":
        ws = task.get("workspace", "")
        open(os.path.join(ws, "j.txt"), "w").write("j\n")
        out.update(message_type="task.complete", outputs={"where": ws})
    elif reply is None:
        continue
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
`

// TestJSONLAgentInWorktreeOnWorker: a jsonl agent with workspace: worktree
// works, as locally, in its attempt's worktree (its task's workspace): what
// it leaves is committed on its branch and pushed, and the plain worktree
// cue after it starts from that branch. A GO given to a worker that ran
// none of the attempt's phases starts the agent there, in a worktree of
// that worker's clone, and pushes the branch from there.
func TestJSONLAgentInWorktreeOnWorker(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	remote, root, other := sharedRemote(t, map[string]string{
		"j.yaml": "cuelist:\n  id: j\n  cues:\n    - {id: A, agents: [jw]}\n    - {id: B, agents: [reader], dependencies: [A]}\n" +
			"---\nagent: {id: jw, command: [python3, writer.py], protocol: jsonl, workspace: worktree, provides: [where]}\n" +
			"---\nagent: {id: reader, run: \"test -f j.txt && echo b > b.txt\", workspace: worktree}\n",
		"writer.py": jsonlWriter,
	})
	res, evs := runInClone(t, root, remote, "j.yaml")
	if res.State != "completed" {
		t.Fatalf("%s: %s\n%s", res.State, res.Reason, story(evs))
	}
	a := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/A/1")
	if files := gitT(t, remote, "ls-tree", "--name-only", a); !strings.Contains(files, "j.txt") {
		t.Errorf("A's branch holds %s, not j.txt", files)
	}
	if where, _ := outputsOf(t, evs, "A")["where"].(string); !strings.HasPrefix(where, filepath.Join(root, ".orch", "worktrees", r1)+string(filepath.Separator)) {
		t.Errorf("the agent worked in %q, not in a worktree of the run", where)
	}
	b := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/B/1")
	if gitT(t, remote, "rev-parse", b+"^") != a {
		t.Errorf("B's commit %s is not on A's %s", b, a)
	}
	if left, _ := os.ReadDir(filepath.Join(root, ".orch", "worktrees", r1)); len(left) != 0 {
		t.Errorf("worktrees left on the worker: %v", left)
	}

	var as testsuite.WorkflowTestSuite
	aenv := as.NewTestActivityEnvironment()
	acts := &Activities{Root: other}
	defer acts.Close()
	aenv.RegisterActivityWithOptions(acts.Go, activity.RegisterOptions{Name: ActivityGo})
	v, err := aenv.ExecuteActivity(ActivityGo, AttemptInput{RunID: r1, Path: "j.yaml", SpecHash: specHashOf(t, other, "j.yaml"), Cue: "A", Agent: "jw", Attempt: 2,
		Task: &attempt.Task{}, Worktree: &WorktreeInput{Remote: remote, Base: gitT(t, other, "rev-parse", "HEAD"), Branch: "orch/" + r1 + "/A/2"}})
	if err != nil {
		t.Fatal(err)
	}
	var got AttemptResult
	if err := v.Get(&got); err != nil || got.Failed {
		t.Fatalf("A's attempt 2 on the other worker: %v %+v", err, got)
	}
	if where, _ := got.Outputs["where"].(string); !strings.HasPrefix(where, filepath.Join(other, ".orch", "worktrees", r1)) || got.Worktree == nil ||
		gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/A/2") != got.Worktree.Commit {
		t.Errorf("A's attempt 2 worked in %q, pushed %+v", where, got.Worktree)
	}
}
