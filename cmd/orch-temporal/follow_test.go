package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// fakeWorkflow answers orch.events queries from a fixed list of events.
type fakeWorkflow struct {
	page func(after int64) temporal.EventsPage
}

func (f fakeWorkflow) QueryWorkflow(_ context.Context, _, _, query string, args ...interface{}) (converter.EncodedValue, error) {
	if query != temporal.QueryEvents {
		return nil, fmt.Errorf("query %s", query)
	}
	return pageValue(f.page(args[0].(int64))), nil
}

type pageValue temporal.EventsPage

func (pageValue) HasValue() bool { return true }
func (p pageValue) Get(ptr interface{}) error {
	*ptr.(*temporal.EventsPage) = temporal.EventsPage(p)
	return nil
}

// temporalStore records run id on Temporal in a new store, owned by this
// process with token, its last heartbeat an hour ago.
func temporalStore(t *testing.T, id, token string) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orch.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	host, _ := os.Hostname()
	err = db.Append(context.Background(), record.Event{RunID: id, At: time.Now().Add(-time.Hour), Type: record.EvRunStarted, Data: record.RunStartedData{
		Cuelist: "c", SpecPath: "/p/c.yaml", Cues: []record.CueInfo{{ID: "A", Agents: []string{"a"}}},
		OwnerPID: os.Getpid(), OwnerHost: host, OwnerToken: token,
		Temporal: &record.TemporalRun{Address: "127.0.0.1:1", Namespace: "default", TaskQueue: "orch", WorkflowID: "orch-" + id, Path: "c.yaml"}}})
	if err != nil {
		t.Fatal(err)
	}
	return db, path
}

// TestFollowerKeepsTheLease: while orch-temporal follows a run it renews
// the run's lease, so orch status reads it plainly running; before (and
// after) it, the run reads running on Temporal, followed by nobody.
func TestFollowerKeepsTheLease(t *testing.T) {
	db, _ := temporalStore(t, "r1", "tok")
	ctx := context.Background()
	if r, err := db.Run(ctx, "r1"); err != nil || r.State != record.RunRunning || !strings.Contains(r.Reason, "followed by nobody") {
		t.Fatalf("unfollowed: %v %s %q", err, r.State, r.Reason)
	}
	running := fakeWorkflow{page: func(after int64) temporal.EventsPage { return temporal.EventsPage{} }}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, _, err := (&follower{c: running, db: db, id: "r1", wfID: "orch-r1", token: "tok"}).follow(fctx)
		done <- err
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := db.Run(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if r.State == record.RunRunning && r.Reason == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follower did not renew the lease: %s %q", r.State, r.Reason)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("follow after cancel: %v", err)
	}
}

// TestFollowerWritesOutputOnce: a follower cut off after writing an
// attempt's output lines but before the event they come with (a crash)
// does not write them again when it follows the run anew.
func TestFollowerWritesOutputOnce(t *testing.T) {
	db, _ := temporalStore(t, "r1", "tok")
	ctx := context.Background()
	started := record.Event{Seq: 2, Type: record.EvAttemptStarted, Cue: "A", Agent: "a", Attempt: 1, Data: record.AttemptStartedData{}}
	ended := record.Event{Seq: 3, Type: record.EvAttemptEnded, Cue: "A", Agent: "a", Attempt: 1, State: string(record.AttemptCompleted), Data: record.AttemptEndedData{}}
	done := record.Event{Seq: 4, Type: record.EvRunState, State: string(record.RunCompleted)}
	lines := []temporal.LogLine{{Stream: "stdout", At: time.Now(), Text: "one"}, {Stream: "stdout", At: time.Now(), Text: "two"}}
	all := []record.Event{started, ended, done}
	wf := fakeWorkflow{page: func(after int64) temporal.EventsPage {
		p := temporal.EventsPage{Done: true}
		for _, e := range all {
			if e.Seq > after {
				p.Events = append(p.Events, e)
			}
		}
		if after < 3 {
			p.Logs = []temporal.SeqLogs{{Seq: 3, Cue: "A", Agent: "a", Attempt: 1, Lines: lines}}
		}
		return p
	}}
	// What the first follower wrote before it died: seq 2, and the lines
	// that come before seq 3.
	started.RunID = "r1"
	if err := db.Append(ctx, started); err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		db.Log(record.LogLine{RunID: "r1", Cue: "A", Agent: "a", Attempt: 1, Stream: l.Stream, At: l.At, Text: l.Text})
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	state, _, err := (&follower{c: wf, db: db, id: "r1", wfID: "orch-r1", token: "tok"}).follow(ctx)
	if err != nil || state != record.RunCompleted {
		t.Fatalf("follow: %v %s", err, state)
	}
	got, err := db.AttemptTail(ctx, "r1", "A", "a", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "one,two" {
		t.Fatalf("the attempt's output in the store: %q", got)
	}
}

// TestFollowerRidesOutFailingQueries: queries that fail for a while (the
// server restarting, no worker polling yet) do not end the follower; a
// workflow that does not exist does, at once.
func TestFollowerRidesOutFailingQueries(t *testing.T) {
	db, _ := temporalStore(t, "r1", "tok")
	fails := 3
	done := record.Event{Seq: 2, Type: record.EvRunState, State: string(record.RunCompleted)}
	flaky := flakyWorkflow{fails: &fails, page: temporal.EventsPage{Events: []record.Event{done}, Done: true}}
	state, _, err := (&follower{c: flaky, db: db, id: "r1", wfID: "orch-r1", token: "tok"}).follow(context.Background())
	if err != nil || state != record.RunCompleted || fails != 0 {
		t.Fatalf("follow: %v %s (failures left %d)", err, state, fails)
	}
	db2, _ := temporalStore(t, "r2", "tok")
	gone := flakyWorkflow{err: serviceerror.NewNotFound("workflow not found")}
	if _, _, err := (&follower{c: gone, db: db2, id: "r2", wfID: "orch-r2", token: "tok"}).follow(context.Background()); err == nil || !strings.Contains(err.Error(), "workflow not found") {
		t.Fatalf("a workflow that does not exist: %v", err)
	}
}

// flakyWorkflow fails its first *fails queries (or all, with err), then
// answers page.
type flakyWorkflow struct {
	fails *int
	err   error
	page  temporal.EventsPage
}

func (f flakyWorkflow) QueryWorkflow(context.Context, string, string, string, ...interface{}) (converter.EncodedValue, error) {
	if f.err != nil {
		return nil, f.err
	}
	if *f.fails > 0 {
		*f.fails--
		return nil, context.DeadlineExceeded
	}
	return pageValue(f.page), nil
}

// TestFollowerOfAPausedRun: orch resume of a run that is paused and still
// waiting (nothing new in its workflow) ends at once with the pause (exit
// 3), and of a run that ended, with its end; it does not wait forever.
func TestFollowerOfAPausedRun(t *testing.T) {
	ctx := context.Background()
	for _, end := range []record.RunState{record.RunPaused, record.RunFailed} {
		db, _ := temporalStore(t, "r1", "tok")
		if err := db.Append(ctx, record.Event{RunID: "r1", Type: record.EvRunState, State: string(end), Reason: "why"}); err != nil {
			t.Fatal(err)
		}
		nothingNew := fakeWorkflow{page: func(int64) temporal.EventsPage { return temporal.EventsPage{Done: end.Ended()} }}
		fctx, cancel := context.WithTimeout(ctx, time.Minute)
		state, reason, err := (&follower{c: nothingNew, db: db, id: "r1", wfID: "orch-r1", token: "tok"}).follow(fctx)
		cancel()
		if err != nil || state != end || reason != "why" {
			t.Errorf("%s: follow: %v %s %q", end, err, state, reason)
		}
	}
}

// The end of following: a stopped run exits 130 (README's exit codes; it
// was 1), a run waiting for GO exits 3 with a line naming the commands that
// continue it (it printed a literal CUE, and an orch resume no longer
// needed), a completed one 0.
func TestFollowUntilDoneExitCodes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		state  record.RunState
		reason string
		code   int
		line   string
	}{
		{record.RunStopped, "orch stop", 130, "run r1 stopped: orch stop"},
		{record.RunPaused, "waiting for GO: B, C", 3, "run r1: waiting for GO: B, C; continue with: orch go r1 B; orch go r1 C"},
		{record.RunFailed, "failed: A", 1, "run r1 failed: failed: A"},
		{record.RunCompleted, "", 0, ""},
	} {
		db, _ := temporalStore(t, "r1", "tok")
		if err := db.Append(ctx, record.Event{RunID: "r1", Type: record.EvRunState, State: string(tc.state), Reason: tc.reason}); err != nil {
			t.Fatal(err)
		}
		over := fakeWorkflow{page: func(int64) temporal.EventsPage { return temporal.EventsPage{Done: tc.state.Ended()} }}
		err := followUntilDone(&follower{c: over, db: db, id: "r1", wfID: "orch-r1", token: "tok"})
		code, line := 0, ""
		if ee, ok := err.(*exitError); ok {
			code, line = ee.code, ee.msg
		} else if err != nil {
			t.Fatalf("%s: %v", tc.state, err)
		}
		if code != tc.code || line != tc.line {
			t.Errorf("%s: exit %d %q, want %d %q", tc.state, code, line, tc.code, tc.line)
		}
	}
}

// TestFollowerKeepsTheLeaseThroughASlowQuery: a query that blocks longer
// than the lease lives (a huge plan's first workflow task, no worker
// polling) does not let the lease lapse: the run still reads followed, and
// no one else can take it. Before, the lease was renewed between queries
// only, and a status catch-up took the run from its follower.
func TestFollowerKeepsTheLeaseThroughASlowQuery(t *testing.T) {
	t.Parallel()
	db, _ := temporalStore(t, "r1", "tok")
	ctx := context.Background()
	release := make(chan struct{})
	slow := fakeWorkflow{page: func(after int64) temporal.EventsPage {
		<-release
		return temporal.EventsPage{Events: []record.Event{{Seq: after + 1, Type: record.EvRunState, State: string(record.RunCompleted)}}, Done: true}
	}}
	done := make(chan error, 1)
	go func() {
		_, _, err := (&follower{c: slow, db: db, id: "r1", wfID: "orch-r1", token: "tok"}).follow(ctx)
		done <- err
	}()
	time.Sleep(record.LeaseTTL + 2*record.HeartbeatEvery) // the query blocks past the lease's life
	r, err := db.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != record.RunRunning || r.Reason != "" {
		t.Errorf("while the follower's query blocks the run reads %s %q, want running and followed", r.State, r.Reason)
	}
	if err := db.ClaimRun(ctx, "r1", record.Owner{Token: "other"}); err == nil {
		t.Errorf("another process took the run from its follower during a slow query")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("follow: %v", err)
	}
}
