package temporal

import (
	"slices"
	"testing"
	"time"
)

// The resolver of a merge to come (a cue's on_conflict: agent, or the run's
// result's) is needed as the cue's own agents are: its pooled process must
// not be closed while the merge may still call on it.
func TestWorkflowNeedsTheMergesResolvers(t *testing.T) {
	remote, root, _ := sharedRemote(t, map[string]string{
		"res.yaml": "cuelist:\n  id: res\n  defaults:\n    merge: {on_conflict: agent, agent: rfix}\n  cues:\n" +
			"    - {id: A, agents: [wa], go: manual}\n" +
			"    - {id: B, agents: [wb], dependencies: [A], merge: {on_conflict: agent, agent: fixer}}\n" +
			"    - {id: P, agents: [plain], merge: {on_conflict: agent, agent: pfix}}\n" +
			"---\nagent: {id: wa, run: 'echo a > a.txt', workspace: worktree}\n" +
			"---\nagent: {id: wb, run: 'echo b > b.txt', workspace: worktree}\n" +
			"---\nagent: {id: plain, run: 'true'}\n" +
			"---\nagent: {id: fixer, run: 'true'}\n---\nagent: {id: rfix, run: 'true'}\n---\nagent: {id: pfix, run: 'true'}\n",
	})
	env := runEnv(t, root)
	var during Needs
	var errDuring error
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryNeeds, []string{"fixer", "rfix", "pfix", "elsewhere"})
		if errDuring = err; err == nil {
			errDuring = v.Get(&during)
		}
		env.SignalWorkflow(SignalGo, GoSignal{Cue: "A"})
	}, time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: r1, Path: "res.yaml", SpecHash: specHashOf(t, root, "res.yaml"),
		Git: &RunGit{Remote: remote, Base: gitT(t, root, "rev-parse", "HEAD"), BaseName: "main"}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	// pfix resolves P's merges, but P works in no worktree: it never merges.
	if errDuring != nil || !slices.Equal(during.Agents, []string{"fixer", "rfix"}) {
		t.Errorf("while A waits for GO: %+v, %v; want agents [fixer rfix]", during, errDuring)
	}
}
