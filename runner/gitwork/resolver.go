package gitwork

import (
	"fmt"
	"strings"

	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// What a resolver (a merge's on_conflict: agent) is given, the same on both
// engines: its task's inputs and, for a coding agent, its prompt.

// ResolverInputs are a resolver's task inputs: the run's, then merge (what
// it is to resolve, of sources with verify) and, for a plain agent's
// environment, merge_problem, merge_reason, merge_files and merge_output.
func (t *MergeTree) ResolverInputs(run map[string]any, sources []sched.MergeSource, p *sched.MergeProblem, verify []string) map[string]any {
	inputs := map[string]any{}
	for k, v := range run {
		inputs[k] = v
	}
	list := make([]any, len(sources))
	for i, s := range sources {
		list[i] = map[string]any{"task": s.Task, "branch": s.Branch, "commit": s.Commit}
	}
	inputs["merge"] = map[string]any{"for": t.What, "branch": t.Branch, "worktree": t.Path, "problem": p.Kind,
		"reason": p.Reason, "files": stringsAny(p.Files), "tasks": stringsAny(p.Tasks), "output": p.Output, "sources": list,
		"verify": stringsAny(verify)}
	inputs["merge_problem"], inputs["merge_reason"] = p.Kind, p.Reason
	inputs["merge_files"], inputs["merge_output"] = strings.Join(p.Files, "\n"), p.Output
	return inputs
}

// ResolverPrompt says in words what a coding agent resolving the merge is
// to do, then gives its own prompt: if it has one (a template over the
// task, as any prompt).
func (t *MergeTree) ResolverPrompt(agent *spec.Agent, p *sched.MergeProblem, verify []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are resolving a git merge for orch, in the worktree %s (branch %s): %s.\n\n", t.Path, t.Branch, p.Reason)
	if p.Kind == "verify" {
		fmt.Fprintf(&b, "The command %s fails on the merged tree. Its last lines:\n\n%s\n\nFix the tree so that it passes; orch runs it again.", QuoteArgv(verify), p.Output)
	} else {
		fmt.Fprintf(&b, "Edit the files in conflict (%s) so that they keep what each side meant, and remove every conflict marker (the lines <<<<<<<, ======= and >>>>>>>). The branches that collided: %s.",
			strings.Join(p.Files, ", "), strings.Join(p.Tasks, ", "))
		if len(verify) > 0 {
			fmt.Fprintf(&b, " Then %s must pass on the merged tree.", QuoteArgv(verify))
		}
	}
	b.WriteString(" Leave your changes in the worktree, committed or not: orch checks that no conflict marker is left and commits them. Do not abort the merge, reset, or check out another branch.")
	text := strings.ReplaceAll(b.String(), "{{", `{{"{{"}}`) // literal text in a template
	if agent.Prompt != "" {
		text += "\n\n" + agent.Prompt
	}
	return text
}

func stringsAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}
