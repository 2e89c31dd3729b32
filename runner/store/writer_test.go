package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// TestSeqContiguousAcrossHandles appends to one run from two handles (two
// processes) at once: sequence numbers are 1..N with no gap or duplicate,
// each caller sees the ones it got, and nobody sees SQLITE_BUSY.
func TestSeqContiguousAcrossHandles(t *testing.T) {
	const handles, goroutines, perGoroutine = 2, 8, 500
	d1, path := openTest(t)
	startRun(t, d1, "r1", "a")
	dbs := []*DB{d1}
	for range handles - 1 {
		d, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		dbs = append(dbs, d)
	}
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	errs := make(chan error, handles*goroutines)
	for h, d := range dbs {
		for g := range goroutines {
			wg.Go(func() {
				var mine []int64
				for i := 0; i < perGoroutine; {
					// Mostly single events, sometimes a few at once.
					n := min(1+i%3, perGoroutine-i)
					evs := make([]record.Event, n)
					for j := range evs {
						evs[j] = record.Event{RunID: "r1", Type: record.EvNote, Reason: fmt.Sprintf("%d/%d/%d", h, g, i+j)}
					}
					if err := d.Append(context.Background(), evs...); err != nil {
						errs <- err
						return
					}
					for j := range evs {
						mine = append(mine, evs[j].Seq)
					}
					i += n
				}
				mu.Lock()
				got = append(got, mine...)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	const total = handles*goroutines*perGoroutine + 1
	slices.Sort(got)
	for i, seq := range got {
		if seq != int64(i+2) { // 1 is run/started
			t.Fatalf("written-back seqs: position %d holds %d", i, seq)
		}
	}
	events, err := d1.Events(context.Background(), "r1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != total {
		t.Fatalf("%d events, want %d", len(events), total)
	}
	seen := map[string]bool{}
	for i, ev := range events {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		if seen[ev.Reason] {
			t.Fatalf("event %q stored twice", ev.Reason)
		}
		seen[ev.Reason] = true
	}
	integrityOK(t, path)
}

func TestSeqAndAtWrittenBack(t *testing.T) {
	d, _ := openTest(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	evs := []record.Event{
		startedEvent(t, "r1", at, "a"),
		{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "warning", At: at.Add(time.Second)},
		{RunID: "r1", Type: record.EvNote, Reason: "no time given"},
	}
	before := time.Now()
	appendOK(t, d, evs...)
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Errorf("event %d: Seq %d", i, ev.Seq)
		}
	}
	if !evs[0].At.Equal(at) {
		t.Errorf("a given At was changed to %v", evs[0].At)
	}
	if evs[2].At.Before(before.Add(-time.Millisecond)) || evs[2].At.After(time.Now()) {
		t.Errorf("At of an event without one: %v", evs[2].At)
	}
	stored, err := d.Events(context.Background(), "r1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !stored[2].At.Equal(evs[2].At) {
		t.Errorf("stored At %v, written back %v", stored[2].At, evs[2].At)
	}
}

func TestAppendRejectsMalformedEvents(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a")
	for _, c := range []struct {
		name string
		ev   record.Event
		want string
	}{
		{"no run", record.Event{Type: record.EvNote}, "no run id"},
		{"no type", record.Event{RunID: "r1"}, "no type"},
		{"unknown run", record.Event{RunID: "nope", Type: record.EvNote}, "run nope does not exist"},
		{"run started twice", startedEvent(t, "r1", time.Time{}, "a"), "run r1 already exists"},
		{"data on a note", record.Event{RunID: "r1", Type: record.EvNote, Data: record.CueStateData{}}, "a note event carries no data"},
		{"data of another type", record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "go", Data: record.AttemptEndedData{}}, "must be a record.CueStateData, not a record.AttemptEndedData"},
		{"data by pointer", record.Event{RunID: "r1", Type: record.EvExhausted, Data: &record.ExhaustedData{}}, "not a *record.ExhaustedData"},
		{"data that cannot be encoded", record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "go", Data: record.CueStateData{Outputs: map[string]any{"f": func() {}}}}, "encoding its data"},
		{"started without data", record.Event{RunID: "r2", Type: record.EvRunStarted}, "no data"},
		{"bad run state", record.Event{RunID: "r1", Type: record.EvRunState, State: "sleeping"}, `unknown run state "sleeping"`},
		{"bad cue state", record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "done"}, `unknown cue state "done"`},
		{"unknown cue", record.Event{RunID: "r1", Type: record.EvCueState, Cue: "zz", State: "go"}, `run r1 has no cue "zz"`},
		{"attempt without number", record.Event{RunID: "r1", Type: record.EvAttemptStarted, Cue: "a", Agent: "x"}, "attempt number"},
		{"attempt of unknown cue", record.Event{RunID: "r1", Type: record.EvAttemptStarted, Cue: "zz", Agent: "x", Attempt: 1}, `no cue "zz"`},
		{"attempt never started", record.Event{RunID: "r1", Type: record.EvAttemptEnded, Cue: "a", Agent: "x", Attempt: 7, State: "failed"}, "never started"},
		{"cooldown without agent", record.Event{RunID: "r1", Type: record.EvCooldown}, "no agent"},
		{"message without type", record.Event{RunID: "r1", Type: record.EvMessage, Data: record.MessageData{Direction: "in"}}, "no message_type"},
		{"go for unknown cue", record.Event{RunID: "r1", Type: record.EvManualGo, Cue: "zz"}, `no cue "zz"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A good event in the same call is not stored either.
			err := d.Append(context.Background(), record.Event{RunID: "r1", Type: record.EvNote, Reason: c.name}, c.ev)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Append = %v, want an error saying %q", err, c.want)
			}
			evs, _ := d.Events(context.Background(), "r1", 0, 0)
			if len(evs) != 1 {
				t.Fatalf("a failed Append left %d events", len(evs))
			}
		})
	}
}

// TestGroupCommit queues many callers while the writer waits for the lock:
// they share a transaction.
func TestGroupCommit(t *testing.T) {
	const callers = 50
	d, path := openTest(t)
	startRun(t, d, "r1", "a")
	before, queued := d.stats.transactions.Load(), d.stats.sent.Load()
	release := holdWriteLock(t, path)
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Go(func() {
			errs <- d.Append(context.Background(), record.Event{RunID: "r1", Type: record.EvNote, Reason: strconv.Itoa(i)})
		})
	}
	// The writer holds what it took first, waiting in BEGIN; the rest queue.
	waitFor(t, "the callers to queue", func() bool { return d.stats.sent.Load() == queued+callers })
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := d.stats.transactions.Load() - before; n > 2 {
		t.Errorf("%d callers took %d transactions, want at most 2", callers, n)
	}
	evs, _ := d.Events(context.Background(), "r1", 0, 0)
	if len(evs) != callers+1 {
		t.Errorf("%d events, want %d", len(evs), callers+1)
	}
}

// TestFailedRequestFailsOnlyItsCaller puts a bad request in a batch of good
// ones: only its caller gets an error.
func TestFailedRequestFailsOnlyItsCaller(t *testing.T) {
	d, path := openTest(t)
	startRun(t, d, "r1", "a")
	queued := d.stats.sent.Load()
	release := holdWriteLock(t, path)
	results := make([]error, 10)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			ev := record.Event{RunID: "r1", Type: record.EvNote, Reason: strconv.Itoa(i)}
			if i == 5 {
				ev = record.Event{RunID: "r1", Type: record.EvCueState, Cue: "missing", State: "go"}
			}
			results[i] = d.Append(context.Background(), ev)
		})
	}
	waitFor(t, "the callers to queue", func() bool { return d.stats.sent.Load() == queued+int64(len(results)) })
	release()
	wg.Wait()
	for i, err := range results {
		if (err != nil) != (i == 5) {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	evs, _ := d.Events(context.Background(), "r1", 0, 0)
	if len(evs) != 10 {
		t.Errorf("%d events, want 10 (run/started and 9 notes)", len(evs))
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Errorf("seq %d at %d: the failed request left a gap", ev.Seq, i)
		}
	}
}

func TestLogFlushOrdering(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a", "b")
	for i := range 1000 {
		cue := []string{"a", "b"}[i%2]
		d.Log(record.LogLine{RunID: "r1", Cue: cue, Agent: cue + "-agent", Attempt: 1, Stream: "stderr", Text: strconv.Itoa(i)})
	}
	if err := d.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	logs, err := d.Logs(context.Background(), "r1", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1000 {
		t.Fatalf("%d lines after Flush, want 1000", len(logs))
	}
	for i, l := range logs {
		if l.Text != strconv.Itoa(i) || l.At.IsZero() || l.Stream != "stderr" || l.Attempt != 1 {
			t.Fatalf("line %d: %+v", i, l)
		}
	}
	// An Append commits every line logged before it, too.
	d.Log(record.LogLine{RunID: "r1", Cue: "a", Stream: "stdout", Text: "before the append"})
	appendOK(t, d, record.Event{RunID: "r1", Type: record.EvNote})
	if logs, _ := d.Logs(context.Background(), "r1", "a", logs[len(logs)-1].ID, 0); len(logs) != 1 {
		t.Errorf("a line logged before Append was not committed with it: %v", logs)
	}
}

func TestLogFailureReportedByFlush(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a")
	d.Log(record.LogLine{RunID: "ghost", Text: "for a run that does not exist"})
	d.Log(record.LogLine{RunID: "r1", Text: "fine"})
	err := d.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "run ghost does not exist") {
		t.Fatalf("Flush = %v", err)
	}
	if err := d.Flush(context.Background()); err != nil {
		t.Errorf("the error was reported twice: %v", err)
	}
	if logs, _ := d.Logs(context.Background(), "r1", "", 0, 0); len(logs) != 1 {
		t.Errorf("the good line was lost with the bad one: %v", logs)
	}
}

// TestLogNeverDrops fills the queue while the writer cannot write: Log waits
// for room instead of dropping lines.
func TestLogNeverDrops(t *testing.T) {
	// The writer may hold up to maxBatch lines in the batch it cannot begin.
	const lines = queueSize + maxBatch + 500
	d, path := openTest(t)
	startRun(t, d, "r1", "a")
	release := holdWriteLock(t, path)
	done := make(chan struct{})
	go func() {
		for i := range lines {
			d.Log(record.LogLine{RunID: "r1", Stream: "stdout", Text: strconv.Itoa(i)})
		}
		close(done)
	}()
	waitFor(t, "the queue to fill", func() bool { return len(d.queue) == queueSize })
	select {
	case <-done:
		t.Fatal("Log returned with a full queue and a blocked writer: lines were dropped")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	<-done
	if err := d.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if logs, _ := d.Logs(context.Background(), "r1", "", 0, 0); len(logs) != lines {
		t.Errorf("%d lines stored, want %d", len(logs), lines)
	}
}

func TestAppendWithCancelledContextWritesNothing(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	evs := []record.Event{{RunID: "r1", Type: record.EvNote}}
	if err := d.Append(ctx, evs...); !errors.Is(err, context.Canceled) || evs[0].Seq != 0 {
		t.Errorf("Append = %v, Seq %d", err, evs[0].Seq)
	}
	if err := d.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if evs, _ := d.Events(context.Background(), "r1", 0, 0); len(evs) != 1 {
		t.Errorf("a cancelled Append was recorded: %v", evs)
	}
}
