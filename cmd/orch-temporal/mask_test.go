package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/runner/record"
)

// The follower masks what it mirrors with the secrets of its own
// environment and the names the run's plan declares (recorded at the run's
// start): a value a worker did not know as a secret (its environment
// lacked it) does not reach the store from the workflow's events, output
// lines or blackboard values.
func TestFollowerMasksWhatItMirrors(t *testing.T) {
	const secret, phrase = "tok-follower-5151-zz", "the-follower-phrase"
	t.Setenv("FOLLOW_TEST_TOKEN", secret)
	t.Setenv("FOLLOW_PHRASE", phrase)
	db, _ := temporalStore(t, "r1", "tok")
	ctx := context.Background()
	run, err := db.TemporalRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	run.Secrets = []string{"FOLLOW_PHRASE"} // as orch-temporal run records them
	all := []record.Event{
		{Seq: 2, Type: record.EvAttemptStarted, Cue: "A", Agent: "a", Attempt: 1, Data: record.AttemptStartedData{}},
		{Seq: 3, Type: record.EvBlackboard, Cue: "A", Agent: "a", Data: record.BlackboardData{Key: "creds", Version: 1}},
		{Seq: 4, Type: record.EvAttemptEnded, Cue: "A", Agent: "a", Attempt: 1, State: string(record.AttemptCompleted),
			Data: record.AttemptEndedData{Outputs: map[string]any{"token": secret}}},
		{Seq: 5, Type: record.EvRunState, State: string(record.RunCompleted), Reason: "done with " + phrase},
	}
	wf := fakeWorkflow{page: func(after int64) temporal.EventsPage {
		p := temporal.EventsPage{Done: true, Values: map[int64]json.RawMessage{3: json.RawMessage(`{"phrase":"` + phrase + `"}`)}}
		for _, e := range all {
			if e.Seq > after {
				p.Events = append(p.Events, e)
			}
		}
		p.Logs = []temporal.SeqLogs{{Seq: 4, Cue: "A", Agent: "a", Attempt: 1, Lines: []temporal.LogLine{{Stream: "stderr", At: time.Now(), Text: "using " + secret}}}}
		return p
	}}
	if _, _, err := (&follower{c: wf, db: db, id: "r1", wfID: "orch-r1", token: "tok", mask: followerMask(run)}).follow(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := db.Events(ctx, "r1", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := db.AttemptTail(ctx, "r1", "A", "a", 1, 10)
	board, _ := db.Blackboard(ctx, "r1")
	b, _ := json.Marshal([]any{evs, lines, board})
	got := string(b)
	if strings.Contains(got, secret) || strings.Contains(got, phrase) {
		t.Errorf("a secret reached the store: %s", got)
	}
	for _, want := range []string{`"token":"[redacted:FOLLOW_TEST_TOKEN]"`, `done with [redacted:FOLLOW_PHRASE]`, `using [redacted:FOLLOW_TEST_TOKEN]`, `[redacted:FOLLOW_PHRASE]"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in the store: %s", want, got)
		}
	}
}

// A person's answer and blackboard value go into the workflow's history
// masked with the secrets of orch-temporal's environment and the plan's
// names; a signal that carries no free text goes as it is.
func TestPersonsSignalsMasked(t *testing.T) {
	const secret, phrase = "tok-signal-3434-qq", "the-signal-phrase"
	t.Setenv("SIGNAL_TEST_TOKEN", secret)
	t.Setenv("SIGNAL_PHRASE", phrase)
	d := followerMask(&record.TemporalRun{Secrets: []string{"SIGNAL_PHRASE"}})
	a := maskedSignal(d, temporal.AnswerSignal{Question: "q1", Answer: "use " + secret, By: "person"}).(temporal.AnswerSignal)
	if a.Answer != "use [redacted:SIGNAL_TEST_TOKEN]" || a.Question != "q1" {
		t.Errorf("the answer as sent: %+v", a)
	}
	bb := maskedSignal(d, temporal.BBSetSignal{Key: "k", Value: map[string]any{"p": phrase}}).(temporal.BBSetSignal)
	if b, _ := json.Marshal(bb.Value); string(b) != `{"p":"[redacted:SIGNAL_PHRASE]"}` {
		t.Errorf("the value as sent: %s", b)
	}
	if g := maskedSignal(d, temporal.GoSignal{Cue: "A", By: "orch go"}); g != any(temporal.GoSignal{Cue: "A", By: "orch go"}) {
		t.Errorf("orch go's signal changed: %+v", g)
	}
}
