package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/redact"
)

// GitRemoteEnv is --git-remote's default, for orch-temporal run and worker.
const GitRemoteEnv = "ORCH_GIT_REMOTE"

// gitRemoteFlag is --git-remote, else $ORCH_GIT_REMOTE. A --git-remote
// given is put in $ORCH_GIT_REMOTE too: the redactors of this process learn
// the credential its URL may carry from there (redact.New), so git's
// errors, which print the URL, are masked wherever they are recorded.
func gitRemoteFlag(cmd *cobra.Command) string {
	if v, _ := cmd.Flags().GetString("git-remote"); v != "" {
		_ = os.Setenv(GitRemoteEnv, v)
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
	repo, err := gitwork.Git(ctx, root, "rev-parse", "--show-toplevel")
	var head string
	if err == nil {
		head, err = gitwork.Git(ctx, root, "rev-parse", "--verify", "HEAD^{commit}")
	}
	if err != nil {
		return nil, &exitError{code: 2, msg: fmt.Sprintf("this cuelist has agents with workspace: worktree, whose attempts start from the commit HEAD is at, but %s is not in a git repository with a commit: %v", root, err)}
	}
	// The workflow's history, the store and the workers get the remote
	// without its credential: a worker pushes with its own --git-remote, or
	// git finds the credential with a credential helper.
	g := &temporal.RunGit{Remote: redact.StripRemote(remote), Base: head, BaseName: head[:12], Repo: repo}
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
	// The recorded remote has no credential: this machine's own remote
	// ($ORCH_GIT_REMOTE, --git-remote) puts it back when it is the same.
	remote := redact.OwnRemote(f.gitRemote, os.Getenv(GitRemoteEnv))
	shown := redact.StripRemote(f.gitRemote) // a run recorded before remotes were stripped
	refs := "refs/heads/orch/" + f.id + "/"
	if _, err := gitwork.Git(context.Background(), f.gitRepo, "fetch", "--quiet", "--no-write-fetch-head", remote, "+"+refs+"*:"+refs+"*"); err != nil {
		fmt.Fprint(os.Stderr, redact.MaskRemote(remote, fmt.Sprintf("run %s: its branches stay on %s (fetching them into %s: %v)\n", f.id, shown, f.gitRepo, err)))
		return
	}
	fmt.Fprintf(os.Stderr, "run %s: its branches (orch/%s/...) fetched from %s into %s; bring its result in with: orch land %s\n", f.id, f.id, shown, f.gitRepo, f.id)
}
