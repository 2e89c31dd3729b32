package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

type retryOptions struct {
	show   display
	rerun  []string
	from   string
	dryRun bool
}

func newRetryCmd(io *streams) *cobra.Command {
	opts := &retryOptions{}
	cmd := &cobra.Command{
		Use:   "retry RUN",
		Short: "Run a run's failed cues again, keeping what completed",
		Long: `Continue a run that failed, was stopped or was interrupted, in the
foreground, under the same run id: completed cues keep their outputs and do
not run again; failed, blocked, skipped and stopped cues run again, with the
specs as they are on disk now (fix the cause, then orch retry). Their
attempt numbers continue, and each agent has its max_attempts again.

A completed cue whose own definition changed since it ran (its cue entry,
or the spec of one of its agents) is kept, and orch retry says so: --rerun
CUE runs it again; --from CUE runs that cue and every cue downstream of it
again. A cue that was in GO when its run's owner died and is not idempotent
waits for orch go, as with orch resume, unless --rerun or --from names it.
--dry-run prints what would run and what is kept, and why, and changes
nothing. A run whose owner is still running is refused: orch stop it first.`,
		Example: `  orch retry last
  orch retry last --dry-run
  orch retry 3f9a --rerun BUILD --rerun TEST
  orch retry 3f9a --from BUILD --stream`,
		Args:              argsBetween(1, 1),
		ValidArgsFunction: completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.show.check(); err != nil {
				return err
			}
			if err := proc.Supported(); err != nil {
				return err
			}
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, dbFile, id string) error {
				// Retried here, a run on Temporal would run its cues on this
				// machine, beside (or after) its workflow.
				if t, err := temporalOf(ctx, db, id); err != nil || t != nil {
					if err != nil {
						return err
					}
					return usageError(fmt.Errorf("run %s runs on Temporal (workflow %s): orch retry is not supported there in this version; start a new run with orch run --engine temporal", id, t.WorkflowID))
				}
				return retryRun(ctx, io, db, dbFile, id, opts)
			})
		},
	}
	opts.show.flags(cmd, "text or json")
	f := cmd.Flags()
	f.StringArrayVar(&opts.rerun, "rerun", nil, "run this completed cue again too (repeatable)")
	f.StringVar(&opts.from, "from", "", "run this cue and every cue downstream of it again")
	f.BoolVar(&opts.dryRun, "dry-run", false, "print what would run and what is kept, and why; change nothing")
	for _, name := range []string{"rerun", "from"} {
		_ = cmd.RegisterFlagCompletionFunc(name, completeRunThen(completeCues))
	}
	return cmd
}

// retryDecision is what orch retry decides before it claims the run.
type retryDecision struct {
	run       *store.RunDetail
	rec       *record.RunRecord // as it was when decided
	set       *spec.Set
	p         *planner.Plan
	now, then map[string]string // cue definitions' hashes: now on disk, recorded
	plan      *retryPlan
}

// decideRetry decides which cues run again, without touching the run, and
// refuses what orch retry refuses: a run still running, a cuelist that no
// longer compiles, nothing to run again (unless only a dry run is asked
// for), an agent command not found. orch serve asks it before it starts an
// orch retry in the background.
func decideRetry(ctx context.Context, db *store.DB, id string, opts *retryOptions) (*retryDecision, error) {
	r, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.State == record.RunRunning {
		return nil, fmt.Errorf("run %s is running: process %d on %s owns it; orch stop %s first, then orch retry %s", id, r.OwnerPID, r.OwnerHost, id, id)
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
	if d.plan, err = planRetry(rec, d.p, d.now, d.then, opts.rerun, opts.from); err != nil {
		return nil, usageError(err)
	}
	if opts.dryRun {
		return d, nil
	}
	if len(d.plan.rerun) == 0 && !d.plan.continues {
		return nil, usageError(fmt.Errorf("run %s is %s: nothing to run again (--rerun CUE or --from CUE runs completed cues again)", id, rec.State))
	}
	if err := checkCommands(d.p); err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	return d, nil
}

// retryRun decides which cues run again, then (unless --dry-run) claims
// the run, records the decision and continues the run in the foreground.
// The decision is made once before the claim, to refuse early without
// touching the run, and again after it on the record as it is then.
func retryRun(ctx context.Context, io *streams, db *store.DB, dbFile, id string, opts *retryOptions) error {
	d, err := decideRetry(ctx, db, id, opts)
	if err != nil {
		return err
	}
	if opts.dryRun {
		return d.plan.print(io, d.rec, opts.show.output, true)
	}
	r, p, now, then := d.run, d.p, d.now, d.then

	me := newOwner()
	if err := db.ClaimRun(ctx, id, me); err != nil {
		var owned *store.OwnedError
		if errors.As(err, &owned) {
			return fmt.Errorf("%w; orch stop %s first, then orch retry %s", err, id, id)
		}
		return err
	}
	rec, err := db.LoadRun(ctx, id)
	if err != nil {
		giveBack(db, id, r.State, r.Reason)
		return err
	}
	plan, err := planRetry(rec, p, now, then, opts.rerun, opts.from)
	if err != nil {
		giveBack(db, id, r.State, r.Reason)
		return usageError(err)
	}
	if len(plan.rerun) == 0 && !plan.continues { // another orch retry finished it meanwhile
		giveBack(db, id, rec.State, rec.Reason)
		return usageError(fmt.Errorf("run %s is %s: nothing to run again", id, rec.State))
	}
	if opts.show.output == "text" {
		_ = plan.print(io, rec, "text", false)
	}
	if err := db.Append(ctx, plan.events(id, now)...); err != nil {
		giveBack(db, id, r.State, r.Reason)
		return err
	}
	return continueWith(ctx, io, db, dbFile, plan.record(rec), d.set, p, me, opts.show)
}

// giveBack returns a claimed run as it was (its state releases the lease),
// when orch retry stops before the run continues.
func giveBack(db *store.DB, id string, state record.RunState, reason string) {
	if state == record.RunRunning {
		state = record.RunInterrupted
	}
	_ = db.Append(context.Background(), record.Event{RunID: id, Type: record.EvRunState, State: string(state), Reason: reason})
}

// retriedBy names who retries: user@host (pid N).
func retriedBy() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s (pid %d)", name, host, os.Getpid())
}

// events records the retry: who asked and what runs again, each cue that
// runs again back to pending, and the definitions it runs with.
func (rp *retryPlan) events(id string, now map[string]string) []record.Event {
	d := record.RetriedData{By: retriedBy(), Rerun: rp.rerun, Kept: rp.kept, Asked: rp.asked, From: rp.from, Stale: rp.stale}
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
