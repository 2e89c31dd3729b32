package runner

import (
	"context"

	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// The git work of a merge, on its own goroutine: gitwork.MergeTree's (the
// same on a Temporal worker), in the project's repository, with the
// verify command run as a process of the merge's attempt
// (merge_verify.go).

// mergeTree is where merge id (a cue's position, or sched.ResultMerge) of
// cue is done, its steps noted as m's.
func (w *worktrees) mergeTree(m *merge, cue, result string) *gitwork.MergeTree {
	t := gitwork.NewMergeTree(w.repo, w.dir, w.runID, m.id, cue, result)
	t.Lock, t.Note = &w.mu, m.note
	return t
}

// round is one round of merge m: open its worktree and merge (by ""), or
// check a resolution by `by` and go on; then verify the merged tree.
func (m *merge) round(ctx context.Context, r *run, by string) sched.MergeReport {
	var verify func(context.Context) (*sched.MergeProblem, error)
	if len(m.verify) > 0 {
		verify = func(ctx context.Context) (*sched.MergeProblem, error) {
			p, err := m.runVerify(ctx, r)
			if err == nil && p != nil {
				m.note(record.MergeVerifyFailed, p.Reason, record.MergeData{Output: p.Output})
			} else if err == nil {
				m.note(record.MergeVerified, quoteArgv(m.verify)+" passed", record.MergeData{})
			}
			return p, err
		}
	}
	rep := m.tree.Round(ctx, m.sources, by, m.problem, verify)
	if rep.Commit != "" && m.id == sched.ResultMerge {
		w := r.host.worktrees
		m.result = m.tree.ResultBranch(ctx, rep.Commit, w.head, w.headName)
	}
	return rep
}

func quoteArgv(argv []string) string { return gitwork.QuoteArgv(argv) }

func lines(s string) []string { return gitwork.Lines(s) }
