package gitwork

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// The git work of a merge at fan-in (or of a run's result), the same on
// both engines: the local runner does it in the project's repository, a
// Temporal worker in its clone of the run's remote. A merge has a worktree
// of its own, <repository>/.orch/worktrees/<run>/<cue>-merge (the result's:
// _result), on its branch, orch/<run>/<cue>/merge (orch/<run>/result). It
// starts at the first of the branches that no other one holds (git
// merge-base --independent) and merges the others in order, each with a
// commit of its own; the last commit of the merge names every cue merged
// and has their branches as parents (an octopus made with commit-tree, the
// tree being what the merges gave). What is already merged is skipped, so a
// merge taken up again after a crash goes on from where its branch is; a
// worktree a dead owner left mid-merge has what it held kept on a branch
// first. Nothing is pushed here, nothing but the merge's own branch moves.

// MergeTree is a merge's worktree and branch, and where its rounds stand.
type MergeTree struct {
	Repo   string // the repository the worktree is of
	Path   string
	Branch string
	What   string // for people: "cue REVIEW", "the run's result"
	RunID  string
	// Lock serialises what changes Repo's worktrees (add, prune) with the
	// other attempts of the run.
	Lock sync.Locker
	// Note records a step a round took (conflict, merged, kept, resolved).
	Note func(state, reason string, data record.MergeData)
	// Pending is the source whose merge stopped at a conflict.
	Pending *sched.MergeSource
}

// NewMergeTree is where merge id (a cue's position, or sched.ResultMerge)
// of cue is done, in dir (the run's worktrees) of repository repo; result
// is the run's result branch.
func NewMergeTree(repo, dir, runID string, id int, cue, result string) *MergeTree {
	if id == sched.ResultMerge {
		return &MergeTree{Repo: repo, RunID: runID, Path: filepath.Join(dir, "_result"), Branch: result, What: "the run's result"}
	}
	part := BranchPart(cue)
	return &MergeTree{Repo: repo, RunID: runID, Path: filepath.Join(dir, part+"-merge"), Branch: fmt.Sprintf("orch/%s/%s/merge", runID, part), What: "cue " + cue}
}

// MergeBranch is the branch of cue's merge in run (NewMergeTree's).
func MergeBranch(runID, cue string) string {
	return fmt.Sprintf("orch/%s/%s/merge", runID, BranchPart(cue))
}

func (t *MergeTree) git(ctx context.Context, args ...string) (string, error) {
	return Git(ctx, t.Path, append(append([]string(nil), Identity...), args...)...)
}

func (t *MergeTree) note(state, reason string, data record.MergeData) {
	if t.Note != nil {
		t.Note(state, reason, data)
	}
}

// Round is one round of the merge of sources: open the worktree and merge
// (by ""), or check that by resolved problem and go on; then verify the
// merged tree (verify nil: no verify command). It ends at the merge's
// commit, or at a problem for the merge's policy.
func (t *MergeTree) Round(ctx context.Context, sources []sched.MergeSource, by string, problem *sched.MergeProblem,
	verify func(context.Context) (*sched.MergeProblem, error)) sched.MergeReport {
	fail := func(err error) sched.MergeReport {
		if ctx.Err() != nil {
			return sched.MergeReport{Err: "stopped"}
		}
		return sched.MergeReport{Err: err.Error()}
	}
	heads, err := t.independent(ctx, sources)
	if err != nil {
		return fail(err)
	}
	if by == "" {
		if err := t.open(ctx, heads[0]); err != nil {
			return fail(err)
		}
	} else if p, err := t.resolved(ctx, problem, by); err != nil {
		return fail(err)
	} else if p != nil {
		return sched.MergeReport{Problem: p}
	}
	if p, err := t.mergeAll(ctx, heads); err != nil {
		return fail(err)
	} else if p != nil {
		return sched.MergeReport{Problem: p}
	}
	if verify != nil {
		if p, err := verify(ctx); err != nil {
			return fail(err)
		} else if p != nil {
			return sched.MergeReport{Problem: p}
		}
	}
	commit, err := t.git(ctx, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return fail(err)
	}
	return sched.MergeReport{Commit: commit}
}

// open makes the merge's worktree: on its branch when the branch exists
// (an earlier owner's), else on a new one at first. A worktree
// an earlier owner left is cleaned, after what it held (a merge in
// progress, a resolution not committed) is kept on a branch of its own.
func (t *MergeTree) open(ctx context.Context, first sched.MergeSource) error {
	if _, err := os.Stat(filepath.Join(t.Path, ".git")); err == nil {
		if st, err := t.git(ctx, "status", "--porcelain", "--untracked-files=all"); err == nil && st != "" {
			if err := t.keep(ctx, "what its worktree held when the run's owner stopped"); err != nil {
				return err
			}
		}
		_, _ = t.git(ctx, "merge", "--abort")
		if _, err := t.git(ctx, "reset", "--hard", "--quiet"); err != nil {
			return err
		}
		_, err := t.git(ctx, "clean", "-fdq")
		return err
	}
	if t.Lock != nil {
		t.Lock.Lock()
		defer t.Lock.Unlock()
	}
	_ = os.RemoveAll(t.Path) // what is not a worktree: a half-made one
	_, _ = Git(ctx, t.Repo, "worktree", "prune")
	if _, err := Git(ctx, t.Repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+t.Branch); err == nil {
		_, err = Git(ctx, t.Repo, "worktree", "add", "--quiet", t.Path, t.Branch)
		return err
	}
	_, err := Git(ctx, t.Repo, "worktree", "add", "--quiet", "-b", t.Branch, t.Path, first.Commit)
	return err
}

// keep commits what the worktree holds (a merge in progress, changes) on a
// branch of its own, <branch>-kept-<commit>, and says so.
func (t *MergeTree) keep(ctx context.Context, what string) error {
	if _, err := t.git(ctx, "add", "--all", "--", "."); err != nil {
		return err
	}
	tree, err := t.git(ctx, "write-tree")
	if err != nil {
		return err
	}
	commit, err := t.git(ctx, "commit-tree", tree, "-p", "HEAD", "-m", "orch: "+what+" ("+t.What+")")
	if err != nil {
		return err
	}
	kept := t.Branch + "-kept-" + commit[:12]
	if _, err := t.git(ctx, "branch", "--force", kept, commit); err != nil {
		return err
	}
	t.note(record.MergeKept, what+": kept on "+kept, record.MergeData{Commit: commit, Kept: kept})
	return nil
}

// ref is how a source is named to git: its commit, else its branch.
func ref(s sched.MergeSource) string {
	if s.Commit != "" {
		return s.Commit
	}
	return s.Branch
}

// independent resolves the sources to commits and keeps, in order, those
// no other one holds: a branch another started from is merged with it.
func (t *MergeTree) independent(ctx context.Context, sources []sched.MergeSource) ([]sched.MergeSource, error) {
	var out []sched.MergeSource
	seen := map[string]bool{}
	args := []string{"merge-base", "--independent"}
	for _, s := range sources {
		commit, err := Git(ctx, t.Repo, "rev-parse", "--verify", "--quiet", ref(s)+"^{commit}")
		if err != nil {
			return nil, fmt.Errorf("%s's branch %s: %w", s.Task, s.Branch, err)
		}
		if seen[commit] {
			continue
		}
		seen[commit] = true
		s.Commit = commit
		out = append(out, s)
		args = append(args, commit)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no branch to merge")
	}
	if len(out) < 2 {
		return out, nil
	}
	heads, err := Git(ctx, t.Repo, args...)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, h := range strings.Fields(heads) {
		keep[h] = true
	}
	kept := out[:0]
	for _, s := range out {
		if keep[s.Commit] {
			kept = append(kept, s)
		}
	}
	return kept, nil
}

// mergeAll merges heads into the worktree's branch, from where it is:
// first at heads[0], then each of the others not yet in it, and ends with
// the commit naming them all. It stops at a conflict, the markers in place.
func (t *MergeTree) mergeAll(ctx context.Context, heads []sched.MergeSource) (*sched.MergeProblem, error) {
	tip, err := t.git(ctx, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return nil, err
	}
	if !t.isAncestor(ctx, heads[0].Commit, tip) {
		if !t.isAncestor(ctx, tip, heads[0].Commit) { // the branch holds other work (an earlier try's): kept
			if err := t.keepBranch(ctx, tip); err != nil {
				return nil, err
			}
		}
		if _, err := t.git(ctx, "reset", "--hard", "--quiet", heads[0].Commit); err != nil {
			return nil, err
		}
	}
	if len(heads) == 1 { // one branch holds all the others: it is the merge
		return nil, nil
	}
	if done, err := t.finished(ctx, heads); err != nil || done {
		return nil, err
	}
	for i, s := range heads[1:] {
		head, err := t.git(ctx, "rev-parse", "--verify", "HEAD")
		if err != nil {
			return nil, err
		}
		if t.isAncestor(ctx, s.Commit, head) {
			continue // merged before (by an earlier owner)
		}
		if _, err := t.git(ctx, "merge", "--no-ff", "--no-commit", "--quiet", s.Commit); err != nil {
			files, ferr := t.unmerged(ctx)
			if ferr != nil || len(files) == 0 {
				_, _ = t.git(ctx, "merge", "--abort")
				return nil, err
			}
			src := s
			t.Pending = &src
			p := &sched.MergeProblem{Kind: "conflict", Files: files, Tasks: t.collided(ctx, heads[:i+1], s, files)}
			p.Reason = fmt.Sprintf("merging %s's branch %s into %s conflicts in %s (%s collided)", s.Task, s.Branch, t.What, strings.Join(files, ", "), AndList(p.Tasks))
			t.note(record.MergeConflict, p.Reason, record.MergeData{Task: s.Task, Files: files, Tasks: p.Tasks})
			return p, nil
		}
		if _, err := t.git(ctx, "commit", "--quiet", "--no-verify", "-m", fmt.Sprintf("orch: merge %s's branch %s (%s)", s.Task, s.Branch, t.What)); err != nil {
			return nil, err
		}
		commit, _ := t.git(ctx, "rev-parse", "--verify", "HEAD")
		t.note(record.MergeMerged, fmt.Sprintf("merged %s's branch %s", s.Task, s.Branch), record.MergeData{Task: s.Task, Commit: commit})
	}
	return nil, t.octopus(ctx, heads)
}

// finished reports whether the branch holds the commit that ends a merge of
// heads (a merge taken up again after it ended, or after a fix on top).
func (t *MergeTree) finished(ctx context.Context, heads []sched.MergeSource) (bool, error) {
	out, err := t.git(ctx, "rev-list", "--first-parent", "--parents", heads[0].Commit+"..HEAD")
	if err != nil {
		return false, err
	}
	want := make([]string, len(heads))
	for i, h := range heads {
		want[i] = h.Commit
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.Join(f[1:], " ") == strings.Join(want, " ") {
			return true, nil
		}
	}
	return false, nil
}

// octopus ends the merge with one commit of the tree the merges gave,
// whose parents are the heads in order and whose message names them.
func (t *MergeTree) octopus(ctx context.Context, heads []sched.MergeSource) error {
	var msg strings.Builder
	tasks := make([]string, len(heads))
	for i, h := range heads {
		tasks[i] = h.Task
	}
	fmt.Fprintf(&msg, "orch: merge %s (%s, run %s)\n\nThe branches merged, in order:\n", strings.Join(tasks, ", "), t.What, t.RunID)
	args := []string{"commit-tree", "HEAD^{tree}"}
	for _, h := range heads {
		fmt.Fprintf(&msg, "- %s: %s (%s)\n", h.Task, h.Branch, h.Commit[:12])
		args = append(args, "-p", h.Commit)
	}
	commit, err := t.git(ctx, append(args, "-m", msg.String())...)
	if err != nil {
		return err
	}
	_, err = t.git(ctx, "reset", "--soft", "--quiet", commit)
	return err
}

// keepBranch keeps commit, which the merge's branch is moved away from, on
// a branch of its own.
func (t *MergeTree) keepBranch(ctx context.Context, commit string) error {
	kept := t.Branch + "-kept-" + commit[:12]
	if _, err := t.git(ctx, "branch", "--force", kept, commit); err != nil {
		return err
	}
	t.note(record.MergeKept, "the merge's branch held another merge: kept on "+kept, record.MergeData{Commit: commit, Kept: kept})
	return nil
}

func (t *MergeTree) isAncestor(ctx context.Context, a, b string) bool {
	_, err := t.git(ctx, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// ResultBranch says where the run's result, at commit, stands against the
// commit the run started from, base (on the branch baseName).
func (t *MergeTree) ResultBranch(ctx context.Context, commit, base, baseName string) *record.ResultBranch {
	rb := &record.ResultBranch{Branch: t.Branch, Commit: commit, Base: baseName, BaseCommit: base}
	if n, err := t.git(ctx, "rev-list", "--count", base+".."+commit); err == nil {
		rb.Ahead, _ = strconv.Atoi(n)
	}
	return rb
}

// AndList is "A", "A and B", "A, B and C".
func AndList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// Lines splits git's output into lines (none for "").
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// union is a and the items of b not in a, in order.
func union(a, b []string) []string {
	seen := make(map[string]bool, len(a))
	out := append([]string(nil), a...)
	for _, s := range a {
		seen[s] = true
	}
	for _, s := range b {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
