package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/gitwork"
)

// workspace: worktree. Each attempt of such an agent works in a git worktree
// of its own, <repository>/.orch/worktrees/<run>/<cue>-<attempt>-<agent>
// (the repository is the one holding the project root), on a new branch
// orch/<run>/<cue>/<attempt>. It starts from the commit of the dependency
// that used a worktree, or from the merge of their branches when several
// did (merge.go), else from the commit HEAD was at when the run started. At
// the end of a successful attempt what the agent left uncommitted is
// committed on its branch; the worktrees are removed when the run ends and
// the branches kept.

// WorkspaceWorktree is the value of an agent's workspace that gives each
// attempt a git worktree.
const WorkspaceWorktree = "worktree"

// worktrees are the run's: where they go and what they start from.
type worktrees struct {
	repo string // the top level of the project's repository
	dir  string // the run's worktrees: <repo>/.orch/worktrees/<run>
	head string // the commit HEAD was at when the run started
	// headName is the branch checked out then (else head, short): what the
	// run's result is ahead of.
	headName string
	runID    string     //
	mu       sync.Mutex // worktree add and remove change the shared repository: one at a time
}

// workspace is one attempt's worktree.
type workspace struct {
	path   string
	branch string
	base   string // the commit it started from
	from   string // the cue whose branch it started from; "" for HEAD
}

// usesWorktrees lists the plan's agents with workspace: worktree.
func usesWorktrees(p *planner.Plan) []string {
	var ids []string
	for id, a := range p.Agents {
		if a.Workspace == WorkspaceWorktree {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// openWorktrees finds the repository holding root, for a run whose agents
// use worktrees: outside one, the run cannot start.
func openWorktrees(runID, root string, agents []string) (*worktrees, error) {
	ctx := context.Background()
	top, err := git(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("agent %s has workspace: worktree, but the project root %s is not inside a git repository (orch starts each attempt's worktree from it): %w",
			strings.Join(agents, ", "), root, err)
	}
	head, err := git(ctx, top, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("agent %s has workspace: worktree, but the repository %s has no commit to start worktrees from: %w",
			strings.Join(agents, ", "), top, err)
	}
	w := &worktrees{repo: top, head: head, headName: head[:12], runID: runID, dir: filepath.Join(top, ".orch", "worktrees", runID)}
	if name, err := git(ctx, top, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && name != "" {
		w.headName = name
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the run's worktree directory: %w", err)
	}
	// The main checkout does not show the worktrees as untracked files.
	ignore := filepath.Join(top, ".orch", "worktrees", ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, os.ErrNotExist) {
		_ = os.WriteFile(ignore, []byte("*\n"), 0o644)
	}
	return w, nil
}

// branchPart makes a task id a branch name's part (gitwork.BranchPart).
func branchPart(id string) string { return gitwork.BranchPart(id) }

// pathFor is where attempt a's worktree is.
func (w *worktrees) pathFor(a *attemptRun) string {
	return filepath.Join(w.dir, fmt.Sprintf("%s-%d-%s", branchPart(a.Cue.ID), a.Number, a.Agent.ID))
}

// add creates attempt a's worktree on a new branch from the run's HEAD.
func (w *worktrees) add(a *attemptRun) (*workspace, error) {
	branch := gitwork.Branch(w.runID, a.Cue.ID, a.Agent.ID, a.Number, len(a.Cue.Agents) > 1)
	ws := &workspace{path: w.pathFor(a), branch: branch, base: w.head}
	create := "-b" // a new branch: an attempt number is never used twice...
	if a.again {
		create = "-B" // ...but by the attempt prepared again after a pause: its branch is made again
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := git(context.Background(), w.repo, "worktree", "add", "--quiet", create, branch, ws.path, ws.base); err != nil {
		return nil, err
	}
	return ws, nil
}

// reset moves the worktree and its branch to base (a commit or a branch) and
// returns the commit.
func (ws *workspace) reset(base string) (string, error) {
	if strings.HasPrefix(base, "-") {
		return "", fmt.Errorf("cannot start a worktree from %q", base)
	}
	ctx := context.Background()
	commit, err := git(ctx, ws.path, "rev-parse", "--verify", base+"^{commit}")
	if err != nil {
		return "", err
	}
	if _, err := git(ctx, ws.path, "reset", "--hard", "--quiet", commit); err != nil {
		return "", err
	}
	return commit, nil
}

// dirFor maps the agent's workdir into the worktree when it is inside the
// repository (and checked in); else the attempt works at the worktree's top.
func (ws *workspace) dirFor(repo, dir string) string { return gitwork.DirIn(repo, ws.path, dir) }

// commit commits what the agent left uncommitted in ws on its branch and
// returns the branch's commit (the base, if nothing was done).
func (ws *workspace) commit(runID, cue, agent string, attempt int) (string, error) {
	return gitwork.CommitLeft(ws.path, runID, cue, agent, attempt)
}

// removeAll removes the run's worktrees (theirs and those an earlier owner
// of the run left); their branches stay. It returns what it could not do.
func (w *worktrees) removeAll() []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	ctx := context.Background()
	entries, _ := os.ReadDir(w.dir)
	var errs []error
	for _, e := range entries {
		path := filepath.Join(w.dir, e.Name())
		if _, err := git(ctx, w.repo, "worktree", "remove", "--force", "--force", path); err != nil {
			errs = append(errs, err)
			_ = os.RemoveAll(path)
		}
	}
	_, _ = git(ctx, w.repo, "worktree", "prune")
	_ = os.Remove(w.dir)
	return errs
}

// git runs git with args in dir (gitwork.Git).
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitwork.Git(ctx, dir, args...)
}

// runGit runs git; with exit1 an exit status of 1 is no error but code 1
// (gitwork.Run).
func runGit(ctx context.Context, dir string, exit1 bool, args ...string) (string, int, error) {
	return gitwork.Run(ctx, dir, exit1, args...)
}
