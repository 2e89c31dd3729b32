package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/sched"
)

// Merges at fan-in on a worker (orch.merge): the branches of a cue's
// dependencies, or of the run's cues for its result, are fetched from the
// run's remote into the worker's clone and merged there as the local
// engine merges them (gitwork.MergeTree, the same branch and commits); the
// verify command runs on the merged tree; a merge that ends well has its
// branch pushed. A conflict, or a verify command that fails, comes back as
// the problem for the workflow's core. The worktree is removed when the
// merge ends; a merge whose problem goes to the person (on_conflict: ask)
// keeps it, on this worker, whose own task queue (Activities.Queue) takes
// the next round (the person's resolution checked, then verify and the
// push) or its removal (orch.merge-drop).

// ActivityMerge merges a cue's (or the run's result's) branches;
// ActivityMergeDrop removes a merge's worktree kept for the person.
const (
	ActivityMerge     = "orch.merge"
	ActivityMergeDrop = "orch.merge-drop"
)

// MergeInput is one merge for a worker to make.
type MergeInput struct {
	RunID    string
	Remote   string
	ID       int    // the cue's plan position, or sched.ResultMerge
	Cue      string // the cue it is for (the result's: the cue it is recorded at)
	Result   string // the run's result branch
	Sources  []sched.MergeSource
	Verify   []string      // the verify command (none: nothing to run)
	Timeout  time.Duration // the verify command's
	Base     string        // the run's base commit (the result is counted from it)
	BaseName string
	// Keep keeps the worktree after a problem: the person is asked to
	// resolve it there.
	Keep bool
	// By, a later round's: who resolved Problem (the merge of Pending
	// stopped at it); the round checks it and goes on.
	By      string
	Problem *sched.MergeProblem
	Pending *sched.MergeSource
	// Secrets are the names of the secrets the plan declares (names only):
	// the verify command's output is masked with them and the worker's
	// environment, as a phase's output is.
	Secrets []string `json:",omitempty"`
}

// MergeResult is what came of a merge: its commit, or a problem, or an
// error (Err); the steps it took, for the workflow to record.
type MergeResult struct {
	Commit  string
	Problem *sched.MergeProblem
	Err     string
	Path    string // its worktree on the worker (removed)
	Notes   []MergeNote
	Result  *record.ResultBranch // the run's result's
	// Kept: the worktree stays after a problem, on the worker whose own
	// queue is Queue (on the machine Host), Pending the merge stopped.
	Kept    bool
	Queue   string
	Host    string
	Pending *sched.MergeSource
}

// MergeNote is a step a merge took (conflict, merged, verified, kept).
type MergeNote struct {
	State, Reason string
	Data          record.MergeData
}

// Merge makes a merge on this worker and pushes its branch.
func (a *Activities) Merge(ctx context.Context, in MergeInput) (*MergeResult, error) {
	defer keepBeating(ctx)()
	remote := a.remote(in.Remote)
	repo, err := gitwork.Git(ctx, a.Root, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the worker's --root %s is not in a git clone of %s: %v", a.Root, remote, err), "workspace", nil)
	}
	sources, err := fetchSources(ctx, repo, remote, in.Sources)
	if err != nil {
		return nil, temporal.NewApplicationError(err.Error(), "workspace")
	}
	dir, err := runWorktrees(repo, in.RunID)
	if err != nil {
		return nil, temporal.NewApplicationError(err.Error(), "workspace")
	}
	t := gitwork.NewMergeTree(repo, dir, in.RunID, in.ID, in.Cue, in.Result)
	res := &MergeResult{Path: t.Path}
	t.Lock = cloneMutex(repo)
	t.Note = func(state, reason string, data record.MergeData) {
		res.Notes = append(res.Notes, MergeNote{State: state, Reason: reason, Data: data})
	}
	kept := false
	defer func() {
		if !kept {
			(&wtPhase{repo: repo, path: t.Path}).remove()
		}
	}()
	var verify func(context.Context) (*sched.MergeProblem, error)
	if len(in.Verify) > 0 {
		verify = func(ctx context.Context) (*sched.MergeProblem, error) {
			p, err := verifyMerge(ctx, in, t, gitwork.DirIn(repo, t.Path, a.Root))
			if err == nil && p != nil {
				t.Note(record.MergeVerifyFailed, p.Reason, record.MergeData{Output: p.Output})
			} else if err == nil {
				t.Note(record.MergeVerified, gitwork.QuoteArgv(in.Verify)+" passed", record.MergeData{})
			}
			return p, err
		}
	}
	t.Pending = in.Pending
	rep := t.Round(ctx, sources, in.By, in.Problem, verify)
	res.Commit, res.Problem, res.Err = rep.Commit, rep.Problem, rep.Err
	if rep.Problem != nil && in.Keep && a.Queue != "" {
		kept = true
		res.Kept, res.Queue, res.Pending = true, a.Queue, t.Pending
		res.Host, _ = os.Hostname()
	}
	if rep.Commit == "" {
		return res, nil
	}
	if _, err := gitwork.Git(ctx, repo, "push", "--quiet", remote, "+refs/heads/"+t.Branch+":refs/heads/"+t.Branch); err != nil {
		return nil, temporal.NewApplicationError(fmt.Sprintf("pushing the merge's branch %s to %s: %v", t.Branch, remote, err), "workspace")
	}
	if in.ID == sched.ResultMerge {
		res.Result = t.ResultBranch(ctx, rep.Commit, in.Base, in.BaseName)
	}
	return res, nil
}

// mergeBeat is how often a merge's activity heartbeats (the SDK sends them
// at most every 30 s when the activity has no heartbeat timeout).
const mergeBeat = 5 * time.Second

// keepBeating heartbeats the activity until the returned stop is called: a
// request to cancel it (the run stops) reaches the worker only in a
// heartbeat's answer; without one the merge, its verify command too, would
// go on to its end (and push its branch) after the run stopped.
func keepBeating(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(mergeBeat)
		defer t.Stop()
		for {
			heartbeat(ctx)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done) }
}

// MergeDrop removes a merge's worktree kept for the person (the merge
// ended otherwise: aborted, unanswered, stopped); its branch stays.
func (a *Activities) MergeDrop(ctx context.Context, in MergeInput) error {
	repo, err := gitwork.Git(ctx, a.Root, "rev-parse", "--show-toplevel")
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "workspace", nil)
	}
	t := gitwork.NewMergeTree(repo, filepath.Join(repo, ".orch", "worktrees", in.RunID), in.RunID, in.ID, in.Cue, in.Result)
	(&wtPhase{repo: repo, path: t.Path}).remove()
	return nil
}

// fetchSources resolves the merge's sources to commits in the clone,
// fetching their branches from the remote when it does not have them.
func fetchSources(ctx context.Context, repo, remote string, in []sched.MergeSource) ([]sched.MergeSource, error) {
	defer lockClone(repo)()
	out := append([]sched.MergeSource(nil), in...)
	for i, s := range out {
		commit, err := fetchCommit(ctx, repo, remote, or(s.Commit, s.Branch), s.Branch)
		if err != nil {
			return nil, fmt.Errorf("%s's branch %s: %v", s.Task, s.Branch, err)
		}
		out[i].Commit = commit
	}
	return out, nil
}

// runWorktrees is the directory of the run's worktrees in the clone
// (<clone>/.orch/worktrees/RUN, as locally), made when missing.
func runWorktrees(repo, runID string) (string, error) {
	dir := filepath.Join(repo, ".orch", "worktrees", runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the run's worktree directory: %v", err)
	}
	// The clone's checkout does not show the worktrees as untracked files.
	if ignore := filepath.Join(repo, ".orch", "worktrees", ".gitignore"); !exists(ignore) {
		_ = os.WriteFile(ignore, []byte("*\n"), 0o644)
	}
	return dir, nil
}

// verifyMerge runs the merge's verify command (argv, no shell) in dir, the
// project root's place in the merged tree; a failure is a problem holding
// its last lines.
func verifyMerge(ctx context.Context, in MergeInput, t *gitwork.MergeTree, dir string) (*sched.MergeProblem, error) {
	s, err := proc.NewStdio(false)
	if err != nil {
		return nil, err
	}
	const grace = 2 * time.Second
	tail := &gitwork.Tail{Max: 40}
	p, err := proc.Start(proc.Spec{Argv: in.Verify, Dir: dir, Env: os.Environ(), Token: in.RunID + "/" + gitwork.BranchPart(in.Cue) + "/merge", Stdio: s, Grace: grace})
	if err != nil {
		return &sched.MergeProblem{Kind: "verify", Reason: fmt.Sprintf("the verify command %s could not start: %v", gitwork.QuoteArgv(in.Verify), err)}, nil
	}
	// Its last lines go into the history and the run's records: masked
	// here, as a phase's output is (redactLines), with the secrets of the
	// worker's environment, which the command runs with, and the plan's
	// declared names.
	d := redact.New(os.Environ(), in.Secrets)
	add := func(line string) { tail.Add(d.Text(line)) }
	p.ReadOutput(driver.Lines(add), driver.Lines(add))
	timeout := in.Timeout
	if timeout <= 0 {
		timeout = time.Hour
	}
	// What it leaves in its process group (a server started in the
	// background) is stopped, as locally: nothing of it stays on the worker.
	return t.Verified(ctx, p, in.Verify, timeout, grace, tail, func(stopped bool) { p.Sweep(grace, stopped) })
}

// cloneMutex is the lock of lockClone, for a merge's worktree.
func cloneMutex(repo string) sync.Locker {
	m, _ := cloneLocks.LoadOrStore(repo, &sync.Mutex{})
	return m.(*sync.Mutex)
}
