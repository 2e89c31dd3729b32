package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// workspace: worktree across machines. The workers share the attempts'
// branches through a git remote: each worker's --root is a clone of it
// (orch worker --git-remote URL; else the remote the run was started with).
// An attempt's phase works in a worktree of that clone, started from its
// dependency's branch (fetched from the remote when the clone does not have
// it) or from the commit the run started from; a successful GO commits what
// the agent left on the attempt's branch, orch/RUN/CUE/N as locally, and
// pushes it. The worktree is removed when the phase ends; the branch stays
// in the clone and on the remote. Branches are merged at fan-in, and into
// the run's result branch, orch/RUN/result, by a worker too (merge.go);
// runs started before that push their result with Result.

// ActivityResult pushes a completed run's result branch.
const ActivityResult = "orch.result"

// RunGit is how a run with worktree agents shares their branches.
type RunGit struct {
	Remote   string // the remote the workers push to and fetch from (a worker's --git-remote wins)
	Base     string // the commit HEAD was at where the run was started
	BaseName string // the branch checked out there (else the commit, short)
	Repo     string // that checkout's repository (its follower fetches the branches there)
}

// WorktreeInput is where a worktree agent's phase starts and what it
// pushes.
type WorktreeInput struct {
	Remote     string
	Base       string // a commit (or a branch) to start from
	BaseBranch string // the branch holding Base on the remote ("": Base is the run's)
	From       string // the cue whose branch it starts from ("": the run's base)
	Branch     string // GO: the attempt's branch; "": a detached worktree, nothing pushed
}

// ResultInput asks a worker to push the run's result branch.
type ResultInput struct {
	RunID    string
	Remote   string
	Branch   string // orch/RUN/result
	Sources  []sched.MergeSource
	Base     string
	BaseName string
}

// cloneLocks serialise what changes a clone (fetch, worktree add and
// remove) among a worker's activities.
var cloneLocks sync.Map

func lockClone(repo string) func() {
	mu := cloneMutex(repo)
	mu.Lock()
	return mu.Unlock
}

// wtPhase is a phase's worktree on a worker.
type wtPhase struct {
	repo, remote, path string
	in                 *WorktreeInput
	base               string // the commit it started from
}

// remote is the remote this worker shares branches through.
func (a *Activities) remote(run string) string {
	if a.GitRemote != "" {
		return a.GitRemote
	}
	return run
}

// openWorktree makes the worktree of a worktree agent's phase (nil for
// another agent).
func (a *Activities) openWorktree(ctx context.Context, in AttemptInput, ag *spec.Agent, ph phase) (*wtPhase, *attempt.Failure) {
	return a.openWorktreeAs(ctx, in, ag, "-"+strings.ToLower(phaseNames[phaseActivity[ph]]))
}

// openWorktreeAs makes a worktree agent's worktree, CUE-N-AGENT+suffix in
// the run's worktrees (nil for another agent).
func (a *Activities) openWorktreeAs(ctx context.Context, in AttemptInput, ag *spec.Agent, suffix string) (*wtPhase, *attempt.Failure) {
	if ag.Workspace != "worktree" {
		return nil, nil
	}
	if in.Worktree == nil {
		return nil, attempt.Failf("workspace", "agent %s has workspace: worktree, but its run names no git remote (orch run --engine temporal --git-remote URL)", ag.ID)
	}
	w := &wtPhase{in: in.Worktree, remote: a.remote(in.Worktree.Remote)}
	if w.remote == "" {
		return nil, attempt.Failf("workspace", "agent %s has workspace: worktree, but this worker has no git remote to share its branch through: start it with orch worker --git-remote URL", ag.ID)
	}
	repo, err := gitwork.Git(ctx, a.Root, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, attempt.Failf("workspace", "%s", remoteText(w.remote, "agent %s has workspace: worktree, but the worker's --root %s is not in a git clone of %s: %v", ag.ID, a.Root, w.remote, err))
	}
	w.repo = repo
	defer lockClone(repo)()
	if w.base, err = fetchCommit(ctx, repo, w.remote, w.in.Base, w.in.BaseBranch); err != nil {
		return nil, attempt.Failf("workspace", "%v", err)
	}
	dir, err := runWorktrees(repo, in.RunID)
	if err != nil {
		return nil, attempt.Failf("workspace", "%v", err)
	}
	w.path = filepath.Join(dir, fmt.Sprintf("%s-%d-%s%s", gitwork.BranchPart(in.Cue), in.Attempt, ag.ID, suffix))
	w.removeLocked() // what an earlier try on this machine left
	args := []string{"worktree", "add", "--quiet", "--detach", w.path, w.base}
	if w.in.Branch != "" { // -B: a later try of the attempt makes its branch again
		args = []string{"worktree", "add", "--quiet", "-B", w.in.Branch, w.path, w.base}
	}
	if _, err := gitwork.Git(ctx, repo, args...); err != nil {
		return nil, attempt.Failf("workspace", "creating the attempt's worktree: %v", err)
	}
	return w, nil
}

// inWorktree is the task with the attempt's worktree as its workspace, as
// locally (nil: a phase before GO).
func inWorktree(task *attempt.Task, w *wtPhase) *attempt.Task {
	if task == nil {
		return nil
	}
	t := *task
	t.Workspace = w.path
	return &t
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// dir is where the agent's processes start in the worktree.
func (w *wtPhase) dir(ag *spec.Agent) string {
	return gitwork.DirIn(w.repo, w.path, attempt.Workdir(ag))
}

// finish commits what the GO left on the attempt's branch, pushes it and
// adds the branch and commit to the outputs, as locally.
func (w *wtPhase) finish(ctx context.Context, in AttemptInput, ag *spec.Agent, res *AttemptResult) *AttemptResult {
	commit, err := gitwork.CommitLeft(w.path, in.RunID, in.Cue, ag.ID, in.Attempt)
	if err != nil {
		return withFail(res, "workspace", fmt.Sprintf("committing the attempt's work on %s: %v", w.in.Branch, err))
	}
	if _, err := gitwork.Git(ctx, w.repo, "push", "--quiet", w.remote, "+refs/heads/"+w.in.Branch+":refs/heads/"+w.in.Branch); err != nil {
		return withFail(res, "workspace", remoteText(w.remote, "pushing the attempt's branch %s to %s: %v", w.in.Branch, w.remote, err))
	}
	out := make(map[string]any, len(res.Outputs)+2)
	for k, v := range res.Outputs {
		out[k] = v
	}
	out[sched.OutputWorktreeBranch], out[sched.OutputWorktreeCommit] = w.in.Branch, commit
	res.Outputs = out
	res.Worktree = &record.WorktreeData{Branch: w.in.Branch, Base: w.base, From: w.in.From, Path: w.path, Commit: commit}
	return res
}

// moveTo puts the worktree on in's branch at its base (fetched when the
// clone lacks it): a pooled agent's worktree, made at WARNING, at its GO.
// As locally, tracked changes are dropped and untracked files kept.
func (w *wtPhase) moveTo(ctx context.Context, in *WorktreeInput) *attempt.Failure {
	unlock := lockClone(w.repo)
	base, err := fetchCommit(ctx, w.repo, w.remote, in.Base, in.BaseBranch)
	unlock()
	if err != nil {
		return attempt.Failf("workspace", "%v", err)
	}
	if _, err := gitwork.Git(ctx, w.path, "checkout", "--quiet", "--force", "-B", in.Branch, base); err != nil {
		return attempt.Failf("workspace", "moving the attempt's worktree to %s: %v", in.Branch, err)
	}
	w.in, w.base = in, base
	return nil
}

// remove removes the phase's worktree (its branch stays).
func (w *wtPhase) remove() {
	defer lockClone(w.repo)()
	w.removeLocked()
}

func (w *wtPhase) removeLocked() {
	ctx := context.Background()
	if _, err := gitwork.Git(ctx, w.repo, "worktree", "remove", "--force", "--force", w.path); err != nil {
		_ = os.RemoveAll(w.path)
	}
	_, _ = gitwork.Git(ctx, w.repo, "worktree", "prune")
}

// fetchCommit is the commit base names in the clone, fetched from remote
// (branch, or every branch when "") when the clone does not have it.
func fetchCommit(ctx context.Context, repo, remote, base, branch string) (string, error) {
	if base == "" || strings.HasPrefix(base, "-") {
		return "", fmt.Errorf("cannot start a worktree from %q", base)
	}
	if c, err := gitwork.Git(ctx, repo, "rev-parse", "--verify", "--quiet", base+"^{commit}"); err == nil {
		return c, nil
	}
	refspec := "+refs/heads/*:refs/orch/fetched/*"
	if branch != "" {
		refspec = "+refs/heads/" + branch + ":refs/orch/fetched/" + branch
	}
	if _, err := gitwork.Git(ctx, repo, "fetch", "--quiet", "--no-write-fetch-head", remote, refspec); err != nil {
		return "", errors.New(remoteText(remote, "fetching %s from %s: %v", or(branch, "the branches"), remote, err))
	}
	if c, err := gitwork.Git(ctx, repo, "rev-parse", "--verify", "--quiet", base+"^{commit}"); err == nil {
		return c, nil
	}
	if branch != "" {
		if c, err := gitwork.Git(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/orch/fetched/"+branch+"^{commit}"); err == nil && strings.HasPrefix(c, base) {
			return c, nil
		}
		return "", errors.New(remoteText(remote, "commit %s of branch %s is not on the remote %s (nor in the clone %s)", base, branch, remote, repo))
	}
	return "", errors.New(remoteText(remote, "the run's base commit %s is neither in the clone %s nor on the remote %s: push it there before the run", base, repo, remote))
}

// remoteText is a message naming remote, or holding git's error text
// (which prints the URL it was given), with remote's credential masked:
// it goes into the workflow's history and the run's records.
func remoteText(remote, format string, args ...any) string {
	return redact.MaskRemote(remote, fmt.Sprintf(format, args...))
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Result pushes a completed run's result branch, for runs started before
// changeMerge (since, orch.merge merges it): their worktree branches form a
// chain (refused otherwise at submit then), each holding the ones before,
// so the result is the last one's commit.
func (a *Activities) Result(ctx context.Context, in ResultInput) (*record.ResultBranch, error) {
	if len(in.Sources) == 0 {
		return nil, temporal.NewNonRetryableApplicationError("no branch to make the run's result of", "workspace", nil)
	}
	remote := a.remote(in.Remote)
	repo, err := gitwork.Git(ctx, a.Root, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(remoteText(remote, "the worker's --root %s is not in a git clone of %s: %v", a.Root, remote, err), "workspace", nil)
	}
	defer lockClone(repo)()
	commits := make([]string, len(in.Sources))
	for i, s := range in.Sources {
		if commits[i], err = fetchCommit(ctx, repo, remote, or(s.Commit, s.Branch), s.Branch); err != nil {
			return nil, temporal.NewApplicationError(err.Error(), "workspace")
		}
	}
	last := len(commits) - 1
	for i, c := range commits[:last] {
		if _, err := gitwork.Git(ctx, repo, "merge-base", "--is-ancestor", c, commits[last]); err != nil {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the branches of %s and %s need a merge, which --engine temporal does not do in this version: run it with --engine local",
				in.Sources[i].Task, in.Sources[last].Task), "workspace", nil)
		}
	}
	if _, err := gitwork.Git(ctx, repo, "push", "--quiet", remote, "+"+commits[last]+":refs/heads/"+in.Branch); err != nil {
		return nil, temporal.NewApplicationError(remoteText(remote, "pushing the run's result %s to %s: %v", in.Branch, remote, err), "workspace")
	}
	_, _ = gitwork.Git(ctx, repo, "branch", "--force", in.Branch, commits[last]) // orch land on this machine finds it too
	rb := &record.ResultBranch{Branch: in.Branch, Commit: commits[last], Base: in.BaseName, BaseCommit: in.Base}
	if n, err := gitwork.Git(ctx, repo, "rev-list", "--count", in.Base+".."+commits[last]); err == nil {
		rb.Ahead, _ = strconv.Atoi(n)
	}
	return rb, nil
}

// worktreeCue: one of the cue's agents, or of their fallbacks, works in a
// worktree.
func worktreeCue(p *planner.Plan, c *planner.Cue) bool {
	for _, id := range c.Agents {
		a := p.Agents[id]
		if a == nil {
			continue
		}
		if a.Workspace == "worktree" {
			return true
		}
		for _, fb := range a.Fallback {
			if f := p.Agents[fb]; f != nil && f.Workspace == "worktree" {
				return true
			}
		}
	}
	return false
}

// UsesWorktrees reports whether an agent of the plan works in a worktree.
func UsesWorktrees(p *planner.Plan) bool {
	for _, c := range p.Order {
		if worktreeCue(p, c) {
			return true
		}
	}
	return false
}
