package main

import (
	"context"
	"fmt"
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
	ctx := context.Background()
	head, err := gitwork.Git(ctx, root, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, &exitError{code: 2, msg: fmt.Sprintf("this cuelist has agents with workspace: worktree, whose attempts start from the commit HEAD is at, but %s is not in a git repository with a commit: %v", root, err)}
	}
	g := &temporal.RunGit{Remote: remote, Base: head, BaseName: head[:12]}
	if name, err := gitwork.Git(ctx, root, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && name != "" {
		g.BaseName = name
	}
	return g, nil
}
