package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// chainedDecision is what the runner commits per cue of a chain: the
// previous cue's attempt ending and its completion, the next cue's STANDBY
// and GO, the one after's WARNING and attempt start.
func chainedDecision(runID, prev, next, after string, sec int) []record.Event {
	exit := 0
	return []record.Event{
		{RunID: runID, At: at(sec), Type: record.EvAttemptEnded, Cue: prev, Agent: prev + "-agent", Attempt: 1,
			State: "completed", Data: record.AttemptEndedData{PID: 4242, ExitCode: &exit}},
		{RunID: runID, At: at(sec), Type: record.EvCueState, Cue: prev, State: "completed",
			Data: record.CueStateData{Outputs: map[string]any{}}},
		{RunID: runID, At: at(sec + 1), Type: record.EvCueState, Cue: next, State: "standby"},
		{RunID: runID, At: at(sec + 2), Type: record.EvCueState, Cue: next, State: "go"},
		{RunID: runID, At: at(sec + 3), Type: record.EvCueState, Cue: after, State: "warning"},
		{RunID: runID, At: at(sec + 3), Type: record.EvAttemptStarted, Cue: after, Agent: after + "-agent", Attempt: 1},
	}
}

// TestChainedDecisionBindsWhatChanges: a chained cue's commit binds the
// values it writes and no more. Every value costs database/sql a conversion
// and the driver a bind (a C copy of each text): the cue UPDATEs bound all
// twelve of their parameters, most of them NULL for "unchanged", the events
// INSERT the run id once per row, and the decision's commit bound 115
// values.
func TestChainedDecisionBindsWhatChanges(t *testing.T) {
	d, _ := openTest(t)
	appendOK(t, d, startedEvent(t, "r1", t0, "a", "b", "c"),
		record.Event{RunID: "r1", At: at(1), Type: record.EvCueState, Cue: "a", State: "warning"},
		record.Event{RunID: "r1", At: at(1), Type: record.EvAttemptStarted, Cue: "a", Agent: "a-agent", Attempt: 1},
		record.Event{RunID: "r1", At: at(2), Type: record.EvCueState, Cue: "a", State: "standby"},
		record.Event{RunID: "r1", At: at(3), Type: record.EvCueState, Cue: "a", State: "go"},
		record.Event{RunID: "r1", At: at(3), Type: record.EvCueState, Cue: "b", State: "warning"},
		record.Event{RunID: "r1", At: at(3), Type: record.EvAttemptStarted, Cue: "b", Agent: "b-agent", Attempt: 1},
	)
	before := d.stats.values.Load()
	appendOK(t, d, chainedDecision("r1", "a", "b", "c", 10)...)
	const (
		attemptEnded   = 7 + 4   // state, reason, class, exit code, pid, outputs, ended; its key
		cueCompleted   = 4 + 2   // state, reason, ended, outputs; the key
		cueStandbyGo   = 5 + 2   // state, reason, standby, go, ended (cleared); the key
		cueWarning     = 5 + 2   // state, reason, warning, ended (cleared), attempts; the key
		attemptStarted = 7 + 1   // its row; the state it may take over (paused)
		events         = 1 + 6*9 // the run once, then six rows of nine more columns
		want           = attemptEnded + cueCompleted + cueStandbyGo + cueWarning + attemptStarted + events
	)
	if got := d.stats.values.Load() - before; got != want {
		t.Errorf("a chained decision bound %d values, want %d", got, want)
	}

	r, err := d.Run(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := r.Cues[0], r.Cues[1], r.Cues[2]
	if a.State != record.CueCompleted || !a.WarningAt.Equal(at(1)) || !a.GoAt.Equal(at(3)) || !a.EndedAt.Equal(at(10)) ||
		!reflect.DeepEqual(a.Outputs, map[string]any{}) || len(a.Attempts) != 1 || a.Attempts[0].State != record.AttemptCompleted {
		t.Errorf("cue a: %+v", a)
	}
	if b.State != record.CueGo || !b.WarningAt.Equal(at(3)) || !b.StandbyAt.Equal(at(11)) || !b.GoAt.Equal(at(12)) ||
		!b.EndedAt.IsZero() || b.Outputs != nil || len(b.Attempts) != 1 {
		t.Errorf("cue b: %+v", b)
	}
	if c.State != record.CueWarning || !c.WarningAt.Equal(at(13)) || !c.StandbyAt.IsZero() || len(c.Attempts) != 1 ||
		c.Attempts[0].State != record.AttemptRunning {
		t.Errorf("cue c: %+v", c)
	}
}

// TestCueUpdateKeepsWhatItDoesNotChange: each cue UPDATE sets only the
// columns its events changed; what an earlier commit wrote stays: outputs
// past a later state without any, a GO given by a person until the cue is
// interrupted, the attempt count past a lower number, and a cue without
// any change to make still says whether it exists.
func TestCueUpdateKeepsWhatItDoesNotChange(t *testing.T) {
	d, _ := openTest(t)
	outputs := map[string]any{"k": "v"}
	appendOK(t, d, startedEvent(t, "r1", t0, "a", "b"),
		record.Event{RunID: "r1", At: at(1), Type: record.EvManualGo, Cue: "a"},
		record.Event{RunID: "r1", At: at(1), Type: record.EvAttemptStarted, Cue: "a", Agent: "x", Attempt: 2},
		record.Event{RunID: "r1", At: at(2), Type: record.EvCueState, Cue: "a", State: "completed", Reason: "done",
			Data: record.CueStateData{Outputs: outputs}})
	appendOK(t, d,
		record.Event{RunID: "r1", At: at(3), Type: record.EvAttemptStarted, Cue: "a", Agent: "y", Attempt: 1},
		record.Event{RunID: "r1", At: at(4), Type: record.EvManualGo, Cue: "b"})
	r, err := d.Run(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.Cues[0], r.Cues[1]
	if a.State != record.CueCompleted || a.Reason != "done" || !a.EndedAt.Equal(at(2)) || !reflect.DeepEqual(a.Outputs, outputs) || !a.Approved {
		t.Errorf("cue a: %+v", a)
	}
	rec, err := d.LoadRun(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if n := rec.Cues["a"].Attempts; n != 2 {
		t.Errorf("cue a's attempts = %d, want 2", n)
	}
	if b.State != record.CuePending || !b.Approved || !b.WarningAt.IsZero() {
		t.Errorf("cue b: %+v", b)
	}
	// A later state without outputs keeps them; interrupted forgets the GO.
	appendOK(t, d, record.Event{RunID: "r1", At: at(5), Type: record.EvCueState, Cue: "a", State: "interrupted"},
		record.Event{RunID: "r1", At: at(5), Type: record.EvCueState, Cue: "b", State: "interrupted", Reason: "stopped"})
	r, _ = d.Run(context.Background(), "r1")
	a, b = r.Cues[0], r.Cues[1]
	if a.State != record.CueInterrupted || a.Reason != "" || !a.EndedAt.IsZero() || !reflect.DeepEqual(a.Outputs, outputs) || a.Approved {
		t.Errorf("interrupted cue a: %+v", a)
	}
	if b.Approved || b.Reason != "stopped" {
		t.Errorf("interrupted cue b: %+v", b)
	}
	// A GO for a cue the run does not have fails its request alone.
	err = d.Append(context.Background(), record.Event{RunID: "r1", Type: record.EvManualGo, Cue: "nope"})
	if err == nil || !strings.Contains(err.Error(), `run r1 has no cue "nope"`) {
		t.Errorf("GO of an unknown cue: %v", err)
	}
}

// TestEventsOfSeveralRunsInOneRequest: the events INSERT binds its run once,
// so a request's events go in one statement per run in a row (and per
// maxRowsPerInsert rows): each keeps its run, its seq and its columns.
func TestEventsOfSeveralRunsInOneRequest(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a")
	startRun(t, d, "r2", "a")
	var events []record.Event
	for i := range maxRowsPerInsert + 3 {
		events = append(events, record.Event{RunID: "r1", At: at(i), Type: "note", Cue: "a", Reason: fmt.Sprint("r1 ", i)})
	}
	events = append(events,
		record.Event{RunID: "r2", At: at(100), Type: "note", Agent: "x", Reason: "r2 0"},
		record.Event{RunID: "r1", At: at(101), Type: "note", Reason: "r1 last"},
		record.Event{RunID: "r2", At: at(102), Type: "note", Attempt: 2, Reason: "r2 1"})
	appendOK(t, d, events...)
	for _, run := range []string{"r1", "r2"} {
		got, err := d.Events(context.Background(), run, 1, 0) // after run/started
		if err != nil {
			t.Fatal(err)
		}
		var want []record.Event
		for _, ev := range events {
			if ev.RunID == run {
				ev.Seq = int64(len(want) + 2)
				want = append(want, ev)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("events of %s:\n%+v\nwant\n%+v", run, got, want)
		}
	}
}

// TestChainedDecisionAllocations: what committing a chained cue's decision
// allocates in the store, from Append to the commit — the events prepared,
// the statements' rows and arguments, the cue changes, the driver's work.
// A transaction's buffers are kept for the next one, the decision's
// outputs ({}) are not encoded twice and a lone write is not given a
// channel to be told its outcome through: 165 allocations before, 138
// after (the rest is database/sql's and the driver's, per value bound).
func TestChainedDecisionAllocations(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector allocates more")
	}
	d, _ := openTest(t)
	const n = 60
	cues := make([]string, n+3)
	for i := range cues {
		cues[i] = fmt.Sprintf("c%d", i)
	}
	appendOK(t, d, startedEvent(t, "r1", t0, cues...),
		record.Event{RunID: "r1", At: at(1), Type: record.EvCueState, Cue: "c0", State: "warning"},
		record.Event{RunID: "r1", At: at(1), Type: record.EvAttemptStarted, Cue: "c0", Agent: "c0-agent", Attempt: 1},
		record.Event{RunID: "r1", At: at(2), Type: record.EvCueState, Cue: "c0", State: "go"},
		record.Event{RunID: "r1", At: at(2), Type: record.EvCueState, Cue: "c1", State: "warning"},
		record.Event{RunID: "r1", At: at(2), Type: record.EvAttemptStarted, Cue: "c1", Agent: "c1-agent", Attempt: 1},
	)
	decisions := make([][]record.Event, n+1)
	for i := range decisions {
		decisions[i] = chainedDecision("r1", cues[i], cues[i+1], cues[i+2], 10*(i+1))
	}
	i := 0
	allocs := testing.AllocsPerRun(n, func() {
		if err := d.Append(context.Background(), decisions[i]...); err != nil {
			t.Fatal(err)
		}
		i++
	})
	const most = 140
	if allocs > most {
		t.Errorf("a chained decision's commit made %.0f allocations, want at most %d", allocs, most)
	}
	t.Logf("%.0f allocations per chained decision", allocs)
}
