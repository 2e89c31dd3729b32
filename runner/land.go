package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Landing a run's result (orch land) and deleting a run's branches (orch
// clean): git work in the repository the run's worktrees were made in,
// which the person runs once the run is over.

// LandResult says what Land did.
type LandResult struct {
	Run     string `json:"run"`
	Result  string `json:"result"` // the result branch
	Into    string `json:"into"`   // the branch it was brought into
	Repo    string `json:"repository"`
	How     string `json:"how"`    // fast-forward, merge, or up-to-date
	Commit  string `json:"commit"` // where Into is now
	Commits int    `json:"commits"`
}

// LandRefused is a landing refused with nothing changed: the working tree
// has changes, or the result does not merge cleanly.
type LandRefused struct{ Why string }

func (e *LandRefused) Error() string { return e.Why + ": nothing was changed" }

// ResultBranchOf is the result branch of run id in the repository holding
// root, which must exist.
func ResultBranchOf(ctx context.Context, root, runID string) (repo, branch string, err error) {
	repo, err = git(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", "", fmt.Errorf("the run's project root %s is not in a git repository: %w", root, err)
	}
	for _, b := range []string{"orch/" + runID + "/result", "orch/" + runID + "/_result"} {
		if _, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+b); err == nil {
			return repo, b, nil
		}
	}
	return repo, "", fmt.Errorf("run %s has no result branch in %s (orch/%s/result): a run has one once it completed with worktree branches", runID, repo, runID)
}

// Land brings branch (a run's result) into the branch checked out in repo:
// a fast-forward when it can, else a merge commit. It refuses, changing
// nothing, when the working tree has changes to tracked files or the merge
// would conflict (LandRefused).
func Land(ctx context.Context, repo, runID, branch string) (*LandResult, error) {
	res := &LandResult{Run: runID, Result: branch, Repo: repo}
	into, err := git(ctx, repo, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return nil, &LandRefused{Why: fmt.Sprintf("%s has no branch checked out (HEAD is detached): check out the branch to land run %s into", repo, runID)}
	}
	res.Into = into
	if dirty, err := git(ctx, repo, "status", "--porcelain", "--untracked-files=no"); err != nil {
		return nil, err
	} else if dirty != "" {
		return nil, &LandRefused{Why: fmt.Sprintf("the working tree of %s has changes not committed (%s): commit or stash them, then land run %s", repo, firstLines(dirty, 3), runID)}
	}
	head, err := git(ctx, repo, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return nil, err
	}
	count := func(from string) int {
		n, _ := git(ctx, repo, "rev-list", "--count", from+".."+branch)
		c, _ := strconv.Atoi(n)
		return c
	}
	ancestor := func(a, b string) bool {
		_, err := git(ctx, repo, "merge-base", "--is-ancestor", a, b)
		return err == nil
	}
	switch {
	case ancestor(branch, head):
		res.How, res.Commit = "up-to-date", head
		return res, nil
	case ancestor(head, branch):
		res.Commits = count(head)
		if _, err := git(ctx, repo, "merge", "--ff-only", "--quiet", branch); err != nil {
			return nil, &LandRefused{Why: "git could not fast-forward " + into + ": " + gitSaid(err)}
		}
		res.How = "fast-forward"
	default:
		if files, err := landConflicts(ctx, repo, branch); err != nil {
			return nil, err
		} else if len(files) > 0 {
			return nil, &LandRefused{Why: fmt.Sprintf("%s does not merge cleanly into %s: conflicts in %s (orch/%s/* has each cue's branch to merge by hand)",
				branch, into, strings.Join(files, ", "), runID)}
		}
		res.Commits = count(head)
		if _, err := git(ctx, repo, "merge", "--no-ff", "--no-edit", "--quiet", "-m", fmt.Sprintf("Land orch run %s (%s)", runID, branch), branch); err != nil {
			_, _ = git(ctx, repo, "merge", "--abort")
			return nil, &LandRefused{Why: "git could not merge " + branch + " into " + into + ": " + gitSaid(err)}
		}
		res.How = "merge"
	}
	res.Commit, err = git(ctx, repo, "rev-parse", "--verify", "HEAD")
	return res, err
}

// landConflicts lists the files that merging branch into HEAD would leave
// in conflict, without touching the working tree or the index: git
// merge-tree (git 2.38 and later), else a merge tried and taken back.
func landConflicts(ctx context.Context, repo, branch string) ([]string, error) {
	out, code, err := runGit(ctx, repo, true, "merge-tree", "--write-tree", "--name-only", "--no-messages", "HEAD", branch)
	switch {
	case err == nil && code == 0:
		return nil, nil
	case err == nil && code == 1: // the merged tree, then the files in conflict
		return lines(out)[1:], nil
	}
	if _, err := git(ctx, repo, "merge", "--no-ff", "--no-commit", "--quiet", branch); err == nil {
		_, _ = git(ctx, repo, "merge", "--abort")
		return nil, nil
	}
	files, _ := git(ctx, repo, "diff", "--name-only", "--diff-filter=U")
	_, _ = git(ctx, repo, "merge", "--abort")
	if files == "" {
		return []string{"(git refused the merge)"}, nil
	}
	return lines(files), nil
}

// RunBranches lists the branches of run id, orch/<run>/..., in the
// repository holding root.
func RunBranches(ctx context.Context, root, runID string) (repo string, branches []string, err error) {
	repo, err = git(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", nil, fmt.Errorf("the run's project root %s is not in a git repository: %w", root, err)
	}
	out, err := git(ctx, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/orch/"+runID+"/")
	if err != nil {
		return "", nil, err
	}
	return repo, lines(out), nil
}

// DeleteBranches deletes a finished run's branches in repo, and what is
// left of its worktrees (a run whose owner was killed keeps them).
func DeleteBranches(ctx context.Context, repo, runID string, branches []string) error {
	dir := filepath.Join(repo, ".orch", "worktrees", runID)
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			_, _ = git(ctx, repo, "worktree", "remove", "--force", "--force", filepath.Join(dir, e.Name()))
		}
		_ = os.RemoveAll(dir)
	}
	_, _ = git(ctx, repo, "worktree", "prune")
	if len(branches) == 0 {
		return nil
	}
	_, err := git(ctx, repo, append([]string{"branch", "--delete", "--force", "--quiet"}, branches...)...)
	return err
}

// gitSaid is what git said, without the command line git() puts first.
func gitSaid(err error) string {
	s := err.Error()
	if _, rest, ok := strings.Cut(s, "): "); ok {
		return rest
	}
	return s
}

func firstLines(s string, n int) string {
	ls := strings.Split(s, "\n")
	for i := range ls {
		ls[i] = strings.TrimSpace(ls[i])
	}
	if len(ls) > n {
		return strings.Join(ls[:n], ", ") + fmt.Sprintf(" and %d more", len(ls)-n)
	}
	return strings.Join(ls, ", ")
}
