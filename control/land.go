package control

import (
	"context"
	"fmt"
	"time"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/store"
)

// Land brings a completed run's result branch (orch/<run>/result) into the
// branch checked out in the run's repository: a fast-forward when it has
// not moved since the run started, else a merge commit. It refuses, changing
// nothing, a working tree with changes to tracked files, no branch checked
// out, or a result that does not merge cleanly.
func (c *Controller) Land(ctx context.Context, run string) (*runner.LandResult, error) {
	var out *runner.LandResult
	err := c.reading(ctx, run, func(db *store.DB, id string) error {
		root, err := runRoot(ctx, db, id)
		if err != nil {
			return err
		}
		repo, branch, err := runner.ResultBranchOf(ctx, root, id)
		if err != nil {
			return err
		}
		out, err = runner.Land(ctx, repo, id, branch)
		return err
	})
	return out, err
}

// runRoot is the project root a run recorded: its repository holds its
// branches.
func runRoot(ctx context.Context, db *store.DB, id string) (string, error) {
	rec, err := db.LoadRun(ctx, id)
	if err != nil {
		return "", err
	}
	if rec.Started.Root == "" {
		return "", fmt.Errorf("run %s recorded no project root (an older orch): its repository is not known", id)
	}
	return rec.Started.Root, nil
}

// CleanRequest deletes the git branches of finished runs.
type CleanRequest struct {
	Run       string        // this run (it must have finished)
	OlderThan time.Duration // else every run that finished longer ago than this
	DryRun    bool          // list the branches, delete nothing
}

// Cleaned is what Clean did for one run.
type Cleaned struct {
	Run      string   `json:"run"`
	Repo     string   `json:"repository"`
	Branches []string `json:"branches"`
	Deleted  bool     `json:"deleted"` // false for a dry run
}

// Clean deletes the branches a finished run (completed, failed or stopped)
// left in its repository, and what is left of its worktrees; a run that may
// still go on keeps its branches (refused when named).
func (c *Controller) Clean(ctx context.Context, req CleanRequest) ([]Cleaned, error) {
	db, err := c.Reader()
	if err != nil {
		return nil, err
	}
	var ids []string
	if req.Run != "" {
		id, err := resolve(ctx, db, req.Run)
		if err != nil {
			return nil, c.damaged(err)
		}
		ids = []string{id}
	} else if ids, err = endedBefore(ctx, db, time.Now().Add(-req.OlderThan)); err != nil {
		return nil, c.damaged(err)
	}
	out := []Cleaned{}
	for _, id := range ids {
		r, err := db.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		if !r.State.Ended() {
			if req.Run != "" {
				return nil, refusedf("run %s is %s and may go on (orch resume, orch go, orch retry): its branches are kept", id, r.State)
			}
			continue
		}
		root, err := runRoot(ctx, db, id)
		if err != nil {
			return nil, err
		}
		repo, branches, err := runner.RunBranches(ctx, root, id)
		if err != nil {
			return nil, err
		}
		cl := Cleaned{Run: id, Repo: repo, Branches: branches}
		if cl.Branches == nil {
			cl.Branches = []string{}
		}
		if !req.DryRun {
			if err := runner.DeleteBranches(ctx, repo, id, branches); err != nil {
				return nil, err
			}
			cl.Deleted = true
		}
		out = append(out, cl)
	}
	return out, nil
}

// endedBefore lists the runs that finished before t.
func endedBefore(ctx context.Context, db *store.DB, t time.Time) ([]string, error) {
	runs, _, err := db.Runs(ctx, 0)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range runs {
		if r.State.Ended() && !r.EndedAt.IsZero() && r.EndedAt.Before(t) {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}
