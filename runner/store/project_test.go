package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func TestRunStartedProjection(t *testing.T) {
	d, path := openTest(t)
	appendOK(t, d, startedEvent(t, "r1", t0, "build", "test", "ship"))
	r, err := d.Run(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	// The recorded owner (pid 42 on "box", heartbeat at t0) is long dead: the
	// run reads as interrupted, ended at its last event.
	want := RunSummary{ID: "r1", Cuelist: "deploy", State: record.RunInterrupted,
		Reason: "its owner (process 42 on box) is gone; orch resume r1 continues it", StartedAt: t0, EndedAt: t0, Cues: 3}
	if r.RunSummary != want {
		t.Errorf("summary %+v\nwant    %+v", r.RunSummary, want)
	}
	if r.SpecPath != "/p/deploy.yaml" || r.SpecHash != "hr1" || r.OwnerPID != 42 || r.OwnerHost != "box" ||
		!reflect.DeepEqual(r.Inputs, map[string]any{"env": "prod"}) || !r.Heartbeat.Equal(t0) {
		t.Errorf("run detail %+v", r)
	}
	for i, id := range []string{"build", "test", "ship"} {
		c := r.Cues[i]
		if c.ID != id || c.State != record.CuePending || !reflect.DeepEqual(c.Agents, []string{id + "-agent"}) {
			t.Errorf("cue %d: %+v", i, c)
		}
	}
	if n := queryInt(t, rawDB(t, path), "SELECT max(position) FROM cues WHERE run_id = 'r1'"); n != 2 {
		t.Errorf("positions up to %d", n)
	}
}

// TestRunStartedManyCues: a run's cues go in a few rows per statement; each
// keeps its plan position, agents and DAG edges, past every statement's
// boundary, and a second run of the same cue ids has its own rows.
func TestRunStartedManyCues(t *testing.T) {
	d, path := openTest(t)
	n := 2*maxRowsPerInsert + 5
	data := record.RunStartedData{Cuelist: "big", OwnerPID: 42, OwnerHost: "box"}
	for i := 0; i < n; i++ {
		c := record.CueInfo{ID: fmt.Sprintf("C%03d", i), Agents: []string{fmt.Sprintf("a%d", i)}, Manual: i%7 == 0}
		if i > 0 {
			c.After = []string{fmt.Sprintf("C%03d", i-1)}
		}
		data.Cues = append(data.Cues, c)
	}
	for _, run := range []string{"r1", "r2"} {
		appendOK(t, d, record.Event{RunID: run, At: t0, Type: record.EvRunStarted, Data: data})
	}
	r, err := d.Run(context.Background(), "r2")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cues) != n {
		t.Fatalf("%d cues, want %d", len(r.Cues), n)
	}
	for i, c := range r.Cues {
		want := data.Cues[i]
		if c.ID != want.ID || c.State != record.CuePending || !reflect.DeepEqual(c.Agents, want.Agents) {
			t.Errorf("cue %d: %+v, want %+v", i, c, want)
		}
	}
	db := rawDB(t, path)
	if got := queryInt(t, db, "SELECT count(*) FROM cues WHERE run_id = 'r1' AND position = CAST(substr(cue_id, 2) AS INTEGER)"); got != int64(n) {
		t.Errorf("%d of %d cues of r1 at their plan position", got, n)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM cues WHERE run_id = 'r1' AND manual = 1"); got != int64((n+6)/7) {
		t.Errorf("%d manual cues, want %d", got, (n+6)/7)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM cues WHERE run_id = 'r1' AND cue_id = 'C068' AND after_cues = '[\"C067\"]'"); got != 1 {
		t.Errorf("the last cue's edges were not kept")
	}
}

func TestRunStateProjection(t *testing.T) {
	for _, c := range []struct {
		state record.RunState
		ended bool
	}{
		{record.RunPaused, false},
		{record.RunInterrupted, true}, // ended, for its durations, at its last event
		{record.RunCompleted, true},
		{record.RunFailed, true},
		{record.RunStopped, true},
	} {
		t.Run(string(c.state), func(t *testing.T) {
			d, _ := openTest(t)
			appendOK(t, d, startedEvent(t, "r1", t0, "a"),
				record.Event{RunID: "r1", At: at(5), Type: record.EvRunState, State: string(c.state), Reason: "because"})
			r, err := d.Run(context.Background(), "r1")
			if err != nil {
				t.Fatal(err)
			}
			if r.State != c.state || r.Reason != "because" || r.EndedAt.Equal(at(5)) != c.ended || r.EndedAt.IsZero() == c.ended {
				t.Errorf("state %s reason %q ended %v", r.State, r.Reason, r.EndedAt)
			}
		})
	}
}

func TestCueStateProjection(t *testing.T) {
	d, _ := openTest(t)
	outputs := map[string]any{"url": "https://x", "n": 3.0}
	appendOK(t, d, startedEvent(t, "r1", t0, "a", "b"),
		record.Event{RunID: "r1", At: at(1), Type: record.EvCueState, Cue: "a", State: "warning"},
		record.Event{RunID: "r1", At: at(2), Type: record.EvCueState, Cue: "a", State: "standby"},
		record.Event{RunID: "r1", At: at(3), Type: record.EvCueState, Cue: "a", State: "go"},
		record.Event{RunID: "r1", At: at(4), Type: record.EvCueState, Cue: "a", State: "completed", Reason: "done",
			Data: record.CueStateData{Outputs: outputs}},
		record.Event{RunID: "r1", At: at(5), Type: record.EvCueState, Cue: "b", State: "blocked", Reason: "a failed"},
	)
	r, err := d.Run(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.Cues[0], r.Cues[1]
	if a.State != record.CueCompleted || a.Reason != "done" || !a.WarningAt.Equal(at(1)) || !a.StandbyAt.Equal(at(2)) ||
		!a.GoAt.Equal(at(3)) || !a.EndedAt.Equal(at(4)) || !reflect.DeepEqual(a.Outputs, outputs) {
		t.Errorf("cue a: %+v", a)
	}
	if b.State != record.CueBlocked || b.Reason != "a failed" || !b.EndedAt.Equal(at(5)) || !b.GoAt.IsZero() || b.Outputs != nil {
		t.Errorf("cue b: %+v", b)
	}
	if r.Completed != 1 || r.Active != 0 || r.RunSummary.Cues != 2 {
		t.Errorf("counts %+v", r.RunSummary)
	}
	// A resumed cue runs again: interrupted is not final, and a new warning
	// keeps the latest phase time.
	appendOK(t, d,
		record.Event{RunID: "r1", At: at(6), Type: record.EvCueState, Cue: "b", State: "interrupted"},
		record.Event{RunID: "r1", At: at(7), Type: record.EvCueState, Cue: "b", State: "warning"},
	)
	r, _ = d.Run(context.Background(), "r1")
	if b := r.Cues[1]; !b.EndedAt.IsZero() || !b.WarningAt.Equal(at(7)) || r.Active != 1 {
		t.Errorf("resumed cue b: %+v", b)
	}
}

func TestAttemptProjection(t *testing.T) {
	d, _ := openTest(t)
	exit := 3
	appendOK(t, d, startedEvent(t, "r1", t0, "a"),
		record.Event{RunID: "r1", At: at(1), Type: record.EvAttemptStarted, Cue: "a", Agent: "x", Attempt: 1},
		record.Event{RunID: "r1", At: at(2), Type: record.EvAttemptEnded, Cue: "a", Agent: "x", Attempt: 1,
			State: "failed", Reason: "exit status 3",
			Data: record.AttemptEndedData{Class: "exit:3", ExitCode: &exit, PID: 999}},
		record.Event{RunID: "r1", At: at(3), Type: record.EvAttemptStarted, Cue: "a", Agent: "y", Attempt: 2,
			Data: record.AttemptStartedData{Fallback: true}},
	)
	r, err := d.Run(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := []AttemptDetail{
		{Number: 1, Agent: "x", State: record.AttemptFailed, Reason: "exit status 3", Class: "exit:3", ExitCode: &exit,
			PID: 999, StartedAt: at(1), EndedAt: at(2)},
		{Number: 2, Agent: "y", State: record.AttemptRunning, Fallback: true, StartedAt: at(3)},
	}
	if got := r.Cues[0].Attempts; !reflect.DeepEqual(got, want) {
		t.Errorf("attempts\n%+v\nwant\n%+v", got, want)
	}
	// An attempt number recorded out of order never lowers the count.
	appendOK(t, d, record.Event{RunID: "r1", Type: record.EvAttemptStarted, Cue: "a", Agent: "z", Attempt: 1})
	rec, err := d.LoadRun(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Cues["a"].Attempts != 2 {
		t.Errorf("attempts = %d, want 2", rec.Cues["a"].Attempts)
	}
}

func TestMessageCooldownAndGoProjections(t *testing.T) {
	d, path := openTest(t)
	until := time.Date(2026, 5, 4, 11, 0, 0, 0, time.UTC)
	appendOK(t, d, startedEvent(t, "r1", t0, "a"),
		record.Event{RunID: "r1", Type: record.EvMessage, Cue: "a", Agent: "x", Attempt: 1,
			Data: record.MessageData{Direction: "in", Type: "ack.warning", ID: "m2", InReplyTo: "m1",
				Body: []byte(`{"message_type":"ack.warning","id":"m2","in_reply_to":"m1"}`)}},
		record.Event{RunID: "r1", Type: record.EvCooldown, Agent: "x", Reason: "failed 3 times",
			Data: record.CooldownData{Until: until}},
		record.Event{RunID: "r1", Type: record.EvManualGo, Cue: "a"},
	)
	raw := rawDB(t, path)
	var dir, typ, id, reply string
	var seq int64
	err := raw.QueryRow(`SELECT seq, direction, type, msg_id, in_reply_to FROM messages WHERE run_id = 'r1'`).
		Scan(&seq, &dir, &typ, &id, &reply)
	if err != nil || seq != 2 || dir != "in" || typ != "ack.warning" || id != "m2" || reply != "m1" {
		t.Errorf("message row: %d %s %s %s %s %v", seq, dir, typ, id, reply, err)
	}
	got, err := d.CooldownUntil(context.Background(), "x")
	if err != nil || !got.Equal(until) {
		t.Errorf("CooldownUntil = %v, %v", got, err)
	}
	if got, _ := d.CooldownUntil(context.Background(), "nobody"); !got.IsZero() {
		t.Errorf("CooldownUntil of an agent without one = %v", got)
	}
	// A later cooldown (from another run, say) replaces the earlier one.
	startRun(t, d, "r2", "a")
	appendOK(t, d, record.Event{RunID: "r2", Type: record.EvCooldown, Agent: "x",
		Data: record.CooldownData{Until: until.Add(time.Hour)}})
	if got, _ := d.CooldownUntil(context.Background(), "x"); !got.Equal(until.Add(time.Hour)) {
		t.Errorf("CooldownUntil after a second cooldown = %v", got)
	}
	r, _ := d.Run(context.Background(), "r1")
	if !r.Cues[0].Approved {
		t.Error("cue/go-approved did not set approved")
	}
}

func TestLoadRun(t *testing.T) {
	d, _ := openTest(t)
	started := startedEvent(t, "r1", t0, "a", "b", "c")
	// Held only by the event: the root, and where a Temporal run runs.
	sd := started.Data.(record.RunStartedData)
	sd.Root = "/work/project"
	sd.Temporal = &record.TemporalRun{Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "orch", WorkflowID: "orch-r1", Path: "deploy.yaml"}
	started.Data = sd
	appendOK(t, d, started,
		record.Event{RunID: "r1", Type: record.EvAttemptStarted, Cue: "a", Agent: "a-agent", Attempt: 1},
		record.Event{RunID: "r1", Type: record.EvAttemptEnded, Cue: "a", Agent: "a-agent", Attempt: 1, State: "completed"},
		record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "completed",
			Data: record.CueStateData{Outputs: map[string]any{"k": "v"}}},
		record.Event{RunID: "r1", Type: record.EvAttemptStarted, Cue: "b", Agent: "b-agent", Attempt: 1},
		record.Event{RunID: "r1", Type: record.EvAttemptStarted, Cue: "b", Agent: "b-agent", Attempt: 2},
		record.Event{RunID: "r1", Type: record.EvCueState, Cue: "b", State: "go"},
		record.Event{RunID: "r1", Type: record.EvManualGo, Cue: "c"},
		record.Event{RunID: "r1", Type: record.EvRunState, State: "interrupted", Reason: "owner died"},
	)
	rec, err := d.LoadRun(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	data := started.Data.(record.RunStartedData)
	want := &record.RunRecord{
		ID: "r1", State: record.RunInterrupted, Reason: "owner died", Started: data,
		Cues: map[string]record.CueRecord{
			"a": {State: record.CueCompleted, Attempts: 1, AgentAttempts: map[string]int{}, Outputs: map[string]any{"k": "v"}},
			"b": {State: record.CueGo, Attempts: 2, AgentAttempts: map[string]int{}, ReachedGo: true,
				Running: []record.AttemptRef{{Agent: "b-agent", Number: 1}, {Agent: "b-agent", Number: 2}}},
			"c": {State: record.CuePending, Approved: true, AgentAttempts: map[string]int{}},
		},
	}
	if !reflect.DeepEqual(rec, want) {
		t.Errorf("LoadRun\n%+v\nwant\n%+v", rec, want)
	}
	var nf *NotFoundError
	if _, err := d.LoadRun(context.Background(), "nope"); !errors.As(err, &nf) {
		t.Errorf("LoadRun of an unknown run = %v", err)
	}
}
