package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/attempt"
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

// gitTimeout bounds one git command (a worktree of a large repository takes
// a while to check out).
const gitTimeout = 5 * time.Minute

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

// branchPart makes a task id a branch name's part: a child's "/" and what
// git refuses in a ref ("..", a trailing "." or ".lock") become "_", and a
// fan-out item's brackets (which git refuses) "@": CUE[0] is CUE@0.
func branchPart(id string) string {
	s := strings.NewReplacer("[", "@", "]", "").Replace(attempt.SafeName(id))
	if strings.Contains(s, "..") || strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") {
		s = strings.ReplaceAll(s, ".", "_")
	}
	return s
}

// pathFor is where attempt a's worktree is.
func (w *worktrees) pathFor(a *attemptRun) string {
	return filepath.Join(w.dir, fmt.Sprintf("%s-%d-%s", branchPart(a.Cue.ID), a.Number, a.Agent.ID))
}

// add creates attempt a's worktree on a new branch from the run's HEAD.
func (w *worktrees) add(a *attemptRun) (*workspace, error) {
	branch := fmt.Sprintf("orch/%s/%s/%d", w.runID, branchPart(a.Cue.ID), a.Number)
	if len(a.Cue.Agents) > 1 { // the cue's agents each have an attempt with this number
		branch += "-" + a.Agent.ID
	}
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
func (ws *workspace) dirFor(repo, dir string) string {
	rel, err := filepath.Rel(repo, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return ws.path
	}
	in := filepath.Join(ws.path, rel)
	if st, err := os.Stat(in); err != nil || !st.IsDir() {
		return ws.path
	}
	return in
}

// commit commits what the agent left uncommitted in ws on its branch and
// returns the branch's commit (the base, if nothing was done).
func (ws *workspace) commit(runID, cue, agent string, attempt int) (string, error) {
	ctx := context.Background()
	changes, err := git(ctx, ws.path, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return "", err
	}
	if changes != "" {
		if _, err := git(ctx, ws.path, "add", "--all", "--", "."); err != nil {
			return "", err
		}
		msg := fmt.Sprintf("orch: run %s, cue %s, attempt %d (%s)\n\nWhat agent %s left uncommitted at the end of its attempt.", runID, cue, attempt, agent, agent)
		// orch's own identity, no hook and no signing: nothing may ask or
		// depend on the person's configuration.
		if _, err := git(ctx, ws.path, append(append([]string(nil), orchGit...),
			"commit", "--quiet", "--no-verify", "--author=orch <orch@localhost>", "-m", msg)...); err != nil {
			return "", err
		}
	}
	return git(ctx, ws.path, "rev-parse", "--verify", "HEAD")
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

// git runs git with args in dir (argv, no shell) and returns its output,
// trimmed; its error names the command and says what git said.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	out, _, err := runGit(ctx, dir, false, args...)
	return out, err
}

// runGit runs git; with exit1 an exit status of 1 is no error but code 1
// (git merge-tree's "conflicts").
func runGit(ctx context.Context, dir string, exit1 bool, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if exit1 && errors.As(err, &exit) && exit.ExitCode() == 1 {
			return strings.TrimSpace(out.String()), 1, nil
		}
		what := strings.TrimSpace(errOut.String())
		if ctx.Err() != nil {
			what = fmt.Sprintf("no answer in %s", gitTimeout)
		}
		if what == "" {
			what = err.Error()
		}
		return "", -1, fmt.Errorf("git %s (in %s): %s", strings.Join(args, " "), dir, what)
	}
	return strings.TrimSpace(out.String()), 0, nil
}

// gitEnv is orch's environment without what would point git elsewhere than
// the directory it runs in, and with no prompt for credentials.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}
