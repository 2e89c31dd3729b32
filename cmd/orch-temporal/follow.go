package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/store"
)

const followPoll = 200 * time.Millisecond

// followPatience is how long the follower keeps asking a workflow whose
// queries fail (a server restarting, no worker polling yet) before it gives
// up; a workflow that does not exist is given up at once.
var followPatience = 2 * time.Minute

// eventsQuerier is what the follower needs of the Temporal client.
type eventsQuerier interface {
	QueryWorkflow(ctx context.Context, workflowID string, runID string, queryType string, args ...interface{}) (converter.EncodedValue, error)
}

// follower is the process that mirrors a run into the store: it holds the
// run's lease (token) while it follows, renewing it as a local run's owner
// does, so that orch status shows the run running; once it is gone the
// run reads as running on Temporal and followed by nobody.
type follower struct {
	c     eventsQuerier
	db    *store.DB
	id    string // the run
	wfID  string // its workflow
	token string // the run's lease, held by this process
	// once: mirror what the workflow has now and return (orch-temporal
	// sync), rather than follow until the run ends or pauses.
	once bool
	// execs are the executions of the workflow heard of (chain.go).
	execs executions
	// gitRemote and gitRepo: where a completed run's branches are fetched
	// from and into (git.go); "" for a run without worktree agents.
	gitRemote, gitRepo string
	// mask masks what is mirrored with the secrets of this process's
	// environment and the plan's names (nil: none). The workers masked it
	// already, with theirs: this is the follower's machine's share.
	mask *redact.Redactor
}

// follow mirrors the workflow's events into the store in seq order until
// the run ends or pauses for a person. It is idempotent: it starts after
// the last seq the store has for the run (the workflow's seqs are the
// store's), so a follower that re-attaches after a crash duplicates
// nothing.
func (f *follower) follow(ctx context.Context) (record.RunState, string, error) {
	c, db, id, wfID := f.c, f.db, f.id, f.wfID
	last, err := lastSeq(ctx, db, id)
	if err != nil {
		return "", "", err
	}
	// The run as the store has it: a follower that finds nothing new
	// returns it (a paused run still waiting: exit 3; an ended one).
	r, err := db.Run(ctx, id)
	if err != nil {
		return "", "", err
	}
	state, reason := r.State, r.Reason
	if state != record.RunPaused && !state.Ended() {
		state, reason = "", ""
	}
	running := func() bool { return state == "" || state == record.RunRunning }
	if running() {
		if err := db.Heartbeat(ctx, id, f.token); err != nil {
			return "", "", f.leaseFailed(ctx, err)
		}
	}
	lease := f.keepLease(ctx, running())
	defer lease.close()
	var failingSince time.Time
	for {
		if err := lease.failure(); err != nil && running() {
			return "", "", f.leaseFailed(ctx, err)
		}
		page, earlier, err := f.execs.pageAfter(ctx, c, wfID, last)
		if err != nil {
			if ctx.Err() != nil {
				return "", "", ctx.Err()
			}
			if state != "" && state != record.RunRunning && state != record.RunPaused { // the workflow ended after its last events were read
				return state, reason, nil
			}
			if f.once {
				return "", "", fmt.Errorf("reading the events of run %s (workflow %s): %w", id, wfID, err)
			}
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			var notFound *serviceerror.NotFound
			if errors.As(err, &notFound) || time.Since(failingSince) > followPatience {
				return "", "", fmt.Errorf("reading the events of run %s (workflow %s): %w", id, wfID, err)
			}
			select {
			case <-ctx.Done():
				return "", "", ctx.Err()
			case <-time.After(followPoll):
			}
			continue
		}
		failingSince = time.Time{}
		paused := state == record.RunPaused
		for _, ev := range page.Events {
			if ev.Seq != last+1 {
				return "", "", fmt.Errorf("run %s: the store is at seq %d but the workflow's next event is %d: another process wrote to the run", id, last, ev.Seq)
			}
			if err := mirror(ctx, db, id, ev, page, f.mask); err != nil {
				return "", "", err
			}
			last = ev.Seq
			if ev.Type == record.EvRunState {
				state, reason = record.RunState(ev.State), f.mask.Text(ev.Reason) // printed at the end: masked as stored
				paused = state == record.RunPaused
				lease.renew(running())
			}
		}
		if err := db.Flush(ctx); err != nil {
			return "", "", err
		}
		switch {
		case earlier && len(page.Events) > 0: // a later execution of the run has the next events
			continue
		case page.Done, f.once && len(page.Events) < temporal.MaxEventsPerQuery:
			return state, reason, nil
		case paused && len(page.Events) < temporal.MaxEventsPerQuery:
			return state, reason, nil
		case len(page.Events) == temporal.MaxEventsPerQuery:
			continue
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-time.After(followPoll):
		}
	}
}

// mirror writes one workflow event to the store: its output lines first,
// then the event (a blackboard write through the board, which records its
// own event: one store seq per workflow seq).
//
// The workflow logs an attempt's lines all at once, with the event of its
// end: lines of that attempt already in the store were written by a
// follower cut off before it wrote the event, and are not written again.
func mirror(ctx context.Context, db *store.DB, id string, ev record.Event, page temporal.EventsPage, mask *redact.Redactor) error {
	for _, s := range page.Logs {
		if s.Seq != ev.Seq || len(s.Lines) == 0 {
			continue
		}
		had, err := db.AttemptTail(ctx, id, s.Cue, s.Agent, s.Attempt, 1)
		if err != nil {
			return err
		}
		if len(had) > 0 {
			continue
		}
		for _, l := range s.Lines {
			db.Log(record.LogLine{RunID: id, Cue: s.Cue, Agent: s.Agent, Attempt: s.Attempt, Stream: l.Stream, At: l.At, Text: mask.Text(l.Text)})
		}
	}
	ev.RunID = id
	if m, ok := page.Memory[ev.Seq]; ok { // an agent's memory.write or delete: the next run sees it
		var err error
		it := m.Item
		it.Key, it.Text = mask.Text(it.Key), mask.Text(it.Text)
		for i, t := range it.Tags {
			it.Tags[i] = mask.Text(t)
		}
		if m.Delete {
			_, err = db.MemoryDelete(ctx, id, it.Key)
		} else {
			err = db.MemoryWrite(ctx, it)
		}
		if err != nil {
			return err
		}
	}
	evs := []record.Event{ev}
	record.Redact(mask, evs)
	ev = evs[0]
	if ev.Type == record.EvBlackboard {
		d, _ := ev.Data.(record.BlackboardData)
		_, err := db.BlackboardWriteMany(ctx, id, []record.BlackboardPut{{Key: d.Key, Value: mask.JSON(page.Values[ev.Seq]), Author: ev.Agent, Cue: ev.Cue}})
		return err
	}
	return db.Append(ctx, ev)
}

// lastSeq is the last seq the store has for the run.
func lastSeq(ctx context.Context, db *store.DB, id string) (int64, error) {
	var last int64
	for {
		evs, err := db.Events(ctx, id, last, 1000)
		if err != nil {
			return 0, err
		}
		if len(evs) == 0 {
			return last, nil
		}
		last = evs[len(evs)-1].Seq
	}
}
