package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

// An Execution is a run this process is to carry out in the foreground: a
// new one (Start), or one continued (a GO on a paused run, Resume, Retry)
// whose lease it holds. The caller adds its own observers and prompts to
// Options, runs it with runner.Run, and closes it.
type Execution struct {
	// DB is the run's database, open for writing: Options.Recorder
	// records into it (perhaps through a wrapper).
	DB      *store.DB
	Options runner.Options
}

// Close closes the run's database.
func (e *Execution) Close() error { return e.DB.Close() }

// Detach, in a request that may continue a run (a GO on a run with no live
// owner, a resume, a retry), continues it in a detached orch process
// rather than handing the caller an Execution: for a caller that must not
// run it itself (orch serve, an MCP server). Log names the process's
// output file, Log-RUN.log next to the database.
type Detach struct {
	Log string
}

// Detached is a run continued in a detached orch process.
type Detached struct {
	PID int    `json:"pid"`
	Log string `json:"log"` // where its output goes
}

// message says where a detached run goes on.
func (d *Detached) message(id string) string {
	return fmt.Sprintf("continuing run %s in the background (pid %d); its output goes to %s", id, d.PID, d.Log)
}

// refusedWhenDetached makes a refusal of a continuation asked for in the
// background Refused whatever its kind (a cuelist that changed, nothing to
// run again): the run, or its cuelist, refuses it now; a damaged database
// stays a failure.
func refusedWhenDetached(d *Detach, err error) error {
	if d == nil || err == nil || errors.Is(err, store.ErrDamaged) {
		return err
	}
	switch KindOf(err) {
	case Refused, Unsupported:
		return err
	}
	return &Error{Kind: Refused, Err: err}
}

// continueRun takes over a recorded run to run it in the foreground: the
// lease is claimed (only one process continues a run), the cuelist is
// compiled again from its file (refused if the files changed, unless
// allowed), completed cues are kept, the others run.
func continueRun(ctx context.Context, db *store.DB, id string, allowSpecChange bool) (*Execution, error) {
	me := newOwner()
	if err := db.ClaimRun(ctx, id, me); err != nil {
		return nil, err
	}
	rec, err := db.LoadRun(ctx, id)
	if err != nil {
		return nil, err
	}
	set, p, changed, err := continuable(rec, allowSpecChange)
	if err != nil {
		release(db, id)
		return nil, err
	}
	if changed { // the cues still to run run as they are now: orch retry compares with that
		hashes := map[string]string{}
		for cue, h := range cueSpecHashes(p) {
			if rec.Cues[cue].State != record.CueCompleted {
				hashes[cue] = h
			}
		}
		if err := db.Append(ctx, cueSpecsEvent(id, hashes)); err != nil {
			release(db, id)
			return nil, err
		}
	}
	return continueWith(db, rec, set, p, me), nil
}

// continuable compiles a recorded run's cuelist again and refuses to
// continue the run with it when its files changed since the run started
// (unless allowed) or an agent's command is not found.
func continuable(rec *record.RunRecord, allowSpecChange bool) (*spec.Set, *planner.Plan, bool, error) {
	set, p, err := compileRecorded(rec)
	if err != nil {
		return nil, nil, false, err
	}
	changed := set.Hash() != rec.Started.SpecHash
	if changed && !allowSpecChange {
		return nil, nil, false, invalidf("run %s: its cuelist's files changed since the run started (%s); continue anyway with --allow-spec-change (or orch retry %s)", rec.ID, rec.Started.SpecPath, rec.ID)
	}
	if err := checkCommands(p); err != nil {
		return nil, nil, false, As(Refused, fmt.Errorf("run %s: %w", rec.ID, err))
	}
	return set, p, changed, nil
}

// newOwner is this process as a run's owner, with a fresh lease token.
func newOwner() record.Owner {
	host, _ := os.Hostname()
	return record.Owner{PID: os.Getpid(), Host: host, Token: record.NewRunID() + record.NewRunID()}
}

// compileRecorded compiles a recorded run's cuelist again, from its file as
// it is now.
func compileRecorded(rec *record.RunRecord) (*spec.Set, *planner.Plan, error) {
	set, p, diags, err := planner.Compile(rec.Started.SpecPath, rec.Started.Cuelist, spec.LoadOptions{Root: rec.Started.Root})
	if err != nil {
		return nil, nil, refusedf("run %s: cannot load its cuelist: %w", rec.ID, err)
	}
	if p == nil {
		return nil, nil, refusedf("run %s: its cuelist %s no longer validates (orch validate %s shows why; %d problem(s))", rec.ID, rec.Started.SpecPath, rec.Started.SpecPath, len(diags))
	}
	return set, p, nil
}

// continueWith is a claimed run, from rec (cues as the runner is to take
// them up), with the plan p, to run in the foreground.
func continueWith(db *store.DB, rec *record.RunRecord, set *spec.Set, p *planner.Plan, me record.Owner) *Execution {
	p = lighten(set, p)
	root := rec.Started.Root
	if root == "" { // recorded by an orch from before handoffs
		root = filepath.Dir(rec.Started.SpecPath)
	}
	return &Execution{DB: db, Options: runner.Options{Plan: p, Recorder: db, RunID: rec.ID, Inputs: rec.Started.Inputs, SpecPath: rec.Started.SpecPath,
		SpecHash: rec.Started.SpecHash, DBPath: db.Path(), Resume: rec, Owner: me, ProjectRoot: root}}
}

// release gives a claimed run back (it is left as it was: resumable).
func release(db *store.DB, id string) {
	_ = db.Append(context.Background(), record.Event{RunID: id, Type: record.EvRunState, State: string(record.RunInterrupted),
		Reason: "not continued: its cuelist could not be used"})
}

// lighten frees what a run no longer needs once its plan is built: the
// spec's YAML trees and the plan's library graph are most of the memory of a
// big cuelist, and the run holds its plan to the end. It returns the plan
// to run: a copy without the graph (the plan itself is never changed).
func lighten(set *spec.Set, p *planner.Plan) *planner.Plan {
	set.ReleaseSources()
	return p.WithoutGraph()
}

// detach continues run id in a detached orch process: this orch binary
// (or c.Exe) with args on the database at dbFile, from this process's
// directory, its output appended to d.Log-RUN.log next to the database.
func (c *Controller) detach(d *Detach, dbFile, id string, args ...string) (*Detached, error) {
	if err := proc.Supported(); err != nil {
		return nil, &Error{Kind: Unsupported, Err: err}
	}
	exe := c.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cannot find the orch binary to continue the run: %w", err)
		}
	}
	logPath := filepath.Join(filepath.Dir(dbFile), d.Log+"-"+id+".log")
	pid, err := startDetached(exe, append([]string{"--db", dbFile}, args...), logPath)
	if err != nil {
		return nil, fmt.Errorf("cannot start orch %s: %v", args[0], err)
	}
	return &Detached{PID: pid, Log: logPath}, nil
}
