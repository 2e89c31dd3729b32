package control

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

// RetryRequest runs a run's failed cues again, keeping what completed.
type RetryRequest struct {
	Run    string
	Rerun  []string // completed cues to run again too
	From   string   // a cue to run again with every cue downstream of it
	DryRun bool     // decide only: the result's Plan says what would run
	// Detach continues the run in a detached orch (else the result holds
	// an Execution for the caller to run).
	Detach *Detach
}

// RetryResult is a retry decided: its Plan, and (unless a dry run) the
// run to continue: an Execution, or Detached.
type RetryResult struct {
	Plan     *RetryPlan `json:"plan"`
	Message  string     `json:"message,omitempty"`
	Detached *Detached  `json:"detached,omitempty"`

	Execution *Execution `json:"-"`
}

// Retry continues a run that failed, was stopped or was interrupted, under
// the same run id: completed cues are kept (unless asked for), the others
// run again with the specs as they are now. It refuses a run whose owner is
// still running, a cuelist that no longer compiles or whose cues changed,
// nothing to run again, an agent command not found, and a run on Temporal.
// The decision is made once before the lease is claimed, to refuse early
// without touching the run, and again after it on the record as it is then.
func (c *Controller) Retry(ctx context.Context, req RetryRequest) (*RetryResult, error) {
	if req.Detach == nil {
		if err := proc.Supported(); err != nil {
			return nil, &Error{Kind: Unsupported, Err: err}
		}
	}
	db, id, err := c.writerOn(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	res, err := c.retry(ctx, db, id, req)
	if res == nil || res.Execution == nil {
		db.Close()
	}
	return res, c.damaged(err)
}

func (c *Controller) retry(ctx context.Context, db *store.DB, id string, req RetryRequest) (*RetryResult, error) {
	// Retried here, a run on Temporal would run its cues on this machine,
	// beside (or after) its workflow.
	if t, err := db.TemporalRun(ctx, id); err != nil || t != nil {
		if err != nil {
			return nil, err
		}
		return nil, invalidf("run %s runs on Temporal (workflow %s): orch retry is not supported there in this version; start a new run with orch run --engine temporal", id, t.WorkflowID)
	}
	d, err := decideRetry(ctx, db, id, req)
	if err != nil {
		return nil, refusedWhenDetached(req.Detach, err)
	}
	if req.DryRun {
		return &RetryResult{Plan: d.plan.public(d.rec)}, nil
	}
	if req.Detach != nil {
		out := &RetryResult{Plan: d.plan.public(d.rec)}
		if out.Detached, err = c.detach(req.Detach, db.Path(), id, retryArgs(id, req)...); err != nil {
			return nil, err
		}
		out.Message = out.Detached.message(id)
		return out, nil
	}
	r, p, now, then := d.run, d.p, d.now, d.then
	me := newOwner()
	if err := db.ClaimRun(ctx, id, me); err != nil {
		var owned *store.OwnedError
		if errors.As(err, &owned) {
			return nil, As(Refused, fmt.Errorf("%w; orch stop %s first, then orch retry %s", err, id, id))
		}
		return nil, err
	}
	rec, err := db.LoadRun(ctx, id)
	if err != nil {
		giveBack(db, id, r.State, r.Reason)
		return nil, err
	}
	plan, err := planRetry(rec, p, now, then, req.Rerun, req.From)
	if err != nil {
		giveBack(db, id, r.State, r.Reason)
		return nil, As(Invalid, err)
	}
	if len(plan.rerun) == 0 && !plan.continues { // another orch retry finished it meanwhile
		giveBack(db, id, rec.State, rec.Reason)
		return nil, invalidf("run %s is %s: nothing to run again", id, rec.State)
	}
	if err := db.Append(ctx, plan.events(id, now)...); err != nil {
		giveBack(db, id, r.State, r.Reason)
		return nil, err
	}
	return &RetryResult{Plan: plan.public(rec), Execution: continueWith(db, plan.record(rec), d.set, p, me)}, nil
}

// retryArgs is orch retry's command line for req, for a detached orch.
func retryArgs(id string, req RetryRequest) []string {
	args := []string{"retry"}
	for _, cue := range req.Rerun {
		args = append(args, "--rerun", cue)
	}
	if req.From != "" {
		args = append(args, "--from", req.From)
	}
	return append(args, id)
}

// retryDecision is what a retry decides before it claims the run.
type retryDecision struct {
	run       *store.RunDetail
	rec       *record.RunRecord // as it was when decided
	set       *spec.Set
	p         *planner.Plan
	now, then map[string]string // cue definitions' hashes: now on disk, recorded
	plan      *retryPlan
}

// decideRetry decides which cues run again, without touching the run, and
// refuses what a retry refuses: a run still running, a cuelist that no
// longer compiles, nothing to run again (unless only a dry run is asked
// for), an agent command not found.
func decideRetry(ctx context.Context, db *store.DB, id string, req RetryRequest) (*retryDecision, error) {
	r, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.State == record.RunRunning {
		return nil, refusedf("run %s is running: process %d on %s owns it; orch stop %s first, then orch retry %s", id, r.OwnerPID, r.OwnerHost, id, id)
	}
	rec, err := db.LoadRun(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &retryDecision{run: r, rec: rec}
	if d.set, d.p, err = compileRecorded(rec); err != nil {
		return nil, err
	}
	if d.then, err = recordedCueHashes(ctx, db, id); err != nil {
		return nil, err
	}
	d.now = cueSpecHashes(d.p)
	if d.plan, err = planRetry(rec, d.p, d.now, d.then, req.Rerun, req.From); err != nil {
		return nil, As(Invalid, err)
	}
	if req.DryRun {
		return d, nil
	}
	if len(d.plan.rerun) == 0 && !d.plan.continues {
		return nil, invalidf("run %s is %s: nothing to run again (--rerun CUE or --from CUE runs completed cues again)", id, rec.State)
	}
	if err := checkCommands(d.p); err != nil {
		return nil, As(Refused, fmt.Errorf("run %s: %w", id, err))
	}
	return d, nil
}

// giveBack returns a claimed run as it was (its state releases the lease),
// when a retry stops before the run continues.
func giveBack(db *store.DB, id string, state record.RunState, reason string) {
	if state == record.RunRunning {
		state = record.RunInterrupted
	}
	_ = db.Append(context.Background(), record.Event{RunID: id, Type: record.EvRunState, State: string(state), Reason: reason})
}

// events records the retry: who asked and what runs again, each cue that
// runs again back to pending, and the definitions it runs with.
func (rp *retryPlan) events(id string, now map[string]string) []record.Event {
	d := record.RetriedData{By: Me(), Rerun: rp.rerun, Kept: rp.kept, Asked: rp.asked, From: rp.from, Stale: rp.stale}
	reason := fmt.Sprintf("orch retry by %s: %d cue(s) run again", d.By, len(rp.rerun))
	if len(rp.rerun) > 0 {
		reason += " (" + strings.Join(rp.rerun, ", ") + ")"
	}
	reason += fmt.Sprintf(", %d completed kept", rp.kept)
	events := []record.Event{{RunID: id, Type: record.EvRunRetried, Reason: reason, Data: d}}
	hashes := map[string]string{}
	for _, v := range rp.verdicts {
		if !v.rerun {
			continue
		}
		hashes[v.id] = now[v.id]
		if v.was != record.CuePending {
			events = append(events, record.Event{RunID: id, Type: record.EvCueState, Cue: v.id, State: string(record.CuePending),
				Reason: "orch retry: it runs again (" + v.why + ")"})
		}
	}
	if len(hashes) > 0 {
		events = append(events, cueSpecsEvent(id, hashes))
	}
	return events
}

// ResumeRequest continues a run whose owner died, or that was paused or
// stopped.
type ResumeRequest struct {
	Run             string
	AllowSpecChange bool // continue even if its cuelist's files changed
	Detach          *Detach
	// Unhandled: options the Temporal engine does not take (see Engine).
	Unhandled []string
}

// ResumeResult is a run to continue (an Execution, or Detached), or a run
// on Temporal that orch-temporal follows again.
type ResumeResult struct {
	Run      string    `json:"run"`
	Message  string    `json:"message,omitempty"`
	Detached *Detached `json:"detached,omitempty"`

	Execution *Execution `json:"-"`
}

// Resume continues an interrupted, paused or stopped run: completed cues
// never run again; a cue in GO when the owner died runs again unless it is
// not idempotent (it waits for a GO). Of two resumes of one run at once,
// exactly one proceeds. A run on Temporal is followed again into the store
// by orch-temporal.
func (c *Controller) Resume(ctx context.Context, req ResumeRequest) (*ResumeResult, error) {
	db, id, err := c.writerOn(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	res, err := c.resume(ctx, db, id, req)
	if res == nil || res.Execution == nil {
		db.Close()
	}
	return res, c.damaged(err)
}

func (c *Controller) resume(ctx context.Context, db *store.DB, id string, req ResumeRequest) (*ResumeResult, error) {
	out := &ResumeResult{Run: id}
	if t, err := onTemporal(ctx, db, id, "orch resume", req.Unhandled); err != nil || t != nil {
		if err == nil {
			out.Message, err = c.handOver(db, id, t, []string{"resume"})
		}
		return out, err
	}
	if req.Detach == nil {
		if err := proc.Supported(); err != nil {
			return nil, &Error{Kind: Unsupported, Err: err}
		}
	}
	r, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	switch r.State {
	case record.RunCompleted, record.RunFailed:
		return nil, invalidf("run %s is %s: there is nothing to resume (orch run starts a new one)", id, r.State)
	case record.RunRunning:
		return nil, refusedf("run %s is running: process %d on %s owns it", id, r.OwnerPID, r.OwnerHost)
	}
	if req.Detach != nil {
		rec, err := db.LoadRun(ctx, id)
		if err == nil {
			_, _, _, err = continuable(rec, req.AllowSpecChange)
		}
		if err != nil {
			return nil, refusedWhenDetached(req.Detach, err)
		}
		args := []string{"resume", id}
		if req.AllowSpecChange {
			args = []string{"resume", "--allow-spec-change", id}
		}
		if out.Detached, err = c.detach(req.Detach, db.Path(), id, args...); err != nil {
			return nil, err
		}
		out.Message = out.Detached.message(id)
		return out, nil
	}
	if out.Execution, err = continueRun(ctx, db, id, req.AllowSpecChange); err != nil {
		return nil, err
	}
	return out, nil
}
