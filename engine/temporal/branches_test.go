package temporal

import (
	"testing"

	"go.temporal.io/sdk/workflow"
)

// twoAgents: T's two agents work in worktrees, each writing its own file;
// C (in a worktree too) depends on T alone and runs join.
func twoAgents(join string) map[string]string {
	return map[string]string{
		"two.yaml": "cuelist:\n  id: two\n  defaults:\n    merge: {on_conflict: fail}\n  cues:\n" +
			"    - {id: T, agents: [wa, wb]}\n    - {id: C, agents: [wc], dependencies: [T]}\n" +
			"---\nagent: {id: wa, run: 'echo a > a.txt', workspace: worktree}\n" +
			"---\nagent: {id: wb, run: 'echo b > b.txt', workspace: worktree}\n" +
			"---\nagent: {id: wc, run: '" + join + "', workspace: worktree}\n",
	}
}

// TestEveryAgentsBranchMergedOnWorker: two agents of one cue in worktrees,
// each committing a different file; C, downstream, starts from the merge
// of both branches (made by a worker), and the run's result holds both.
func TestEveryAgentsBranchMergedOnWorker(t *testing.T) {
	remote, root, _ := sharedRemote(t, twoAgents("test -f a.txt && test -f b.txt && echo c > c.txt"))
	res, evs := runInClone(t, root, remote, "two.yaml")
	if res.State != "completed" {
		t.Fatalf("%s: %s\n%s", res.State, res.Reason, story(evs))
	}
	merge := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/C/merge")
	if got, want := gitT(t, remote, "log", "-1", "--format=%P", merge),
		gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/T/1-wa")+" "+gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/T/2-wb"); got != want {
		t.Errorf("the merge's parents %q, want T's agents' %q", got, want)
	}
	if files := gitT(t, remote, "ls-tree", "--name-only", "refs/heads/orch/"+r1+"/result"); files != "a.txt\nb.txt\nc.txt\ntwo.yaml" {
		t.Errorf("the result holds %q", files)
	}
}

// A run started before changeAgentBranches keeps its behaviour: T passes
// on its last agent's branch only, so C starts from wb's alone.
func TestLastBranchOnlyBeforeTheChange(t *testing.T) {
	remote, root, _ := sharedRemote(t, twoAgents("test ! -f a.txt && test -f b.txt"))
	env := runEnv(t, root)
	env.OnGetVersion(changeAgentBranches, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	if res, evs := runInCloneOn(t, env, root, remote, "two.yaml"); res.State != "completed" {
		t.Fatalf("%s: %s\n%s", res.State, res.Reason, story(evs))
	}
}
