package main

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/gitwork"
)

// GitRemoteEnv is --git-remote's default, for orch-temporal run and worker.
const GitRemoteEnv = "ORCH_GIT_REMOTE"

// gitRemoteFlag is --git-remote, else $ORCH_GIT_REMOTE.
func gitRemoteFlag(cmd *cobra.Command) string {
	if v, _ := cmd.Flags().GetString("git-remote"); v != "" {
		return v
	}
	return os.Getenv(GitRemoteEnv)
}

// runGit is how a run whose agents work in worktrees shares their branches:
// the remote, and the commit HEAD is at in the checkout at root, which the
// attempts start from. A run without worktree agents needs none (nil); one
// with them is refused without a remote or outside a git repository.
func runGit(cmd *cobra.Command, root string, p *planner.Plan) (*temporal.RunGit, error) {
	if !temporal.UsesWorktrees(p) {
		return nil, nil
	}
	remote := gitRemoteFlag(cmd)
	if remote == "" {
		return nil, &exitError{code: 2, msg: "this cuelist has agents with workspace: worktree: on --engine temporal their branches go from worker to worker through a git remote every worker's --root is a clone of; name it with --git-remote URL (or $ORCH_GIT_REMOTE), or run it with --engine local"}
	}
	if u, err := url.Parse(remote); err == nil && u.User != nil {
		if _, secret := u.User.Password(); secret {
			return nil, &exitError{code: 2, msg: "--git-remote holds a password or token, which would be recorded in the run's workflow history: give git the credentials with a credential helper or an SSH key instead"}
		}
	}
	ctx := context.Background()
	repo, err := gitwork.Git(ctx, root, "rev-parse", "--show-toplevel")
	var head string
	if err == nil {
		head, err = gitwork.Git(ctx, root, "rev-parse", "--verify", "HEAD^{commit}")
	}
	if err != nil {
		return nil, &exitError{code: 2, msg: fmt.Sprintf("this cuelist has agents with workspace: worktree, whose attempts start from the commit HEAD is at, but %s is not in a git repository with a commit: %v", root, err)}
	}
	g := &temporal.RunGit{Remote: remote, Base: head, BaseName: head[:12], Repo: repo}
	if name, err := gitwork.Git(ctx, root, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && name != "" {
		g.BaseName = name
	}
	return g, nil
}

// fetchBranches brings a completed run's branches, orch/RUN/..., from the
// remote into the repository it was started from, where orch land finds
// its result. It only says what went wrong: the branches stay on the remote.
func (f *follower) fetchBranches() {
	if f.gitRemote == "" || f.gitRepo == "" {
		return
	}
	refs := "refs/heads/orch/" + f.id + "/"
	if _, err := gitwork.Git(context.Background(), f.gitRepo, "fetch", "--quiet", "--no-write-fetch-head", f.gitRemote, "+"+refs+"*:"+refs+"*"); err != nil {
		fmt.Fprintf(os.Stderr, "run %s: its branches stay on %s (fetching them into %s: %v)\n", f.id, f.gitRemote, f.gitRepo, err)
		return
	}
	fmt.Fprintf(os.Stderr, "run %s: its branches (orch/%s/...) fetched from %s into %s; bring its result in with: orch land %s\n", f.id, f.id, f.gitRemote, f.gitRepo, f.id)
}
