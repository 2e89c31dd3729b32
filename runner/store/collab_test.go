//go:build unix

package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

func taskStartedEvent(t testing.TB, runID, id, agent, parent, kind string, depth int) record.Event {
	return record.Event{RunID: runID, Type: record.EvTaskStarted, Cue: id, Agent: agent,
		Data: record.TaskStartedData{Parent: parent, Kind: kind, Depth: depth, TaskRef: "T-" + id,
			Chain: []string{"x", agent}, Context: map[string]any{"task_description": "test " + id}}}
}

func questionEvent(t testing.TB, runID, qid, cue, agent, to string) record.Event {
	return record.Event{RunID: runID, Type: record.EvQuestion, Cue: cue, Agent: agent, Attempt: 1,
		Data: record.QuestionData{ID: qid, Question: "Which database, " + qid + "?", Complexity: "quick", To: to, Deadline: at(1800)}}
}

func closeEvent(t testing.TB, runID, qid, state, answer, by, reason string) record.Event {
	return record.Event{RunID: runID, Type: record.EvQuestionClosed, State: state, Reason: reason,
		Data: record.AnswerData{ID: qid, Answer: answer, By: by}}
}

// A child task is a cue row with its parent, kind and depth; its states and
// attempts are recorded as a plan cue's are, and it does not count among the
// plan's cues.
func TestTaskStartedProjection(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	appendOK(t, d, startedEvent(t, "r1", t0, "CUE-100", "CUE-200"),
		record.Event{RunID: "r1", At: at(1), Type: record.EvCueState, Cue: "CUE-100", State: "go"},
		taskStartedEvent(t, "r1", "CUE-100/1", "tester", "CUE-100", "handoff", 1),
	)
	appendOK(t, d,
		record.Event{RunID: "r1", At: at(2), Type: record.EvCueState, Cue: "CUE-100/1", State: "go"},
		record.Event{RunID: "r1", At: at(2), Type: record.EvAttemptStarted, Cue: "CUE-100/1", Agent: "tester", Attempt: 1},
		taskStartedEvent(t, "r1", "CUE-100/1/1", "helper", "CUE-100/1", "spawn", 2),
		record.Event{RunID: "r1", At: at(3), Type: record.EvAttemptEnded, Cue: "CUE-100/1", Agent: "tester", Attempt: 1, State: "completed",
			Data: record.AttemptEndedData{Outputs: map[string]any{"report": "ok"}}},
		record.Event{RunID: "r1", At: at(3), Type: record.EvCueState, Cue: "CUE-100/1", State: "completed",
			Data: record.CueStateData{Outputs: map[string]any{"report": "ok"}}},
	)
	r, err := d.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID, Parent, Kind, TaskRef string
		Depth                     int
		State                     record.CueState
		Agents                    []string
		Attempts                  int
	}
	var got []row
	for _, c := range r.Cues {
		got = append(got, row{c.ID, c.Parent, c.Kind, c.TaskRef, c.Depth, c.State, c.Agents, len(c.Attempts)})
	}
	want := []row{
		{"CUE-100", "", "", "", 0, record.CueGo, []string{"CUE-100-agent"}, 0},
		{"CUE-200", "", "", "", 0, record.CuePending, []string{"CUE-200-agent"}, 0},
		{"CUE-100/1", "CUE-100", "handoff", "T-CUE-100/1", 1, record.CueCompleted, []string{"tester"}, 1},
		{"CUE-100/1/1", "CUE-100/1", "spawn", "T-CUE-100/1/1", 2, record.CuePending, []string{"helper"}, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cues\n%+v\nwant\n%+v", got, want)
	}
	if r.Cues[2].Attempts[0].State != record.AttemptCompleted || !r.Cues[2].EndedAt.Equal(at(3)) ||
		!reflect.DeepEqual(r.Cues[2].Outputs, map[string]any{"report": "ok"}) {
		t.Errorf("child task %+v", r.Cues[2])
	}
	// The summary counts the plan's two cues, one of them active.
	if r.RunSummary.Cues != 2 || r.Active != 1 || r.Completed != 0 {
		t.Errorf("summary %+v", r.RunSummary)
	}
	runs, _, err := d.Runs(ctx, 0)
	if err != nil || len(runs) != 1 || runs[0].Cues != 2 || runs[0].Completed != 0 || runs[0].Active != 1 {
		t.Errorf("Runs = %+v, %v", runs, err)
	}
	if ctxJSON := queryString(t, rawDB(t, path), "SELECT context FROM cues WHERE run_id = 'r1' AND cue_id = 'CUE-100/1'"); ctxJSON != `{"task_description":"test CUE-100/1"}` {
		t.Errorf("context column %s", ctxJSON)
	}
	// LoadRun: the children are among the cues, not among the plan's.
	rec, err := d.LoadRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Started.Cues) != 2 || len(rec.Cues) != 4 || rec.Cues["CUE-100/1"].State != record.CueCompleted ||
		rec.Cues["CUE-100/1"].Attempts != 1 || rec.Cues["CUE-100/1/1"].State != record.CuePending {
		t.Errorf("LoadRun: %+v", rec)
	}
}

func TestTaskStartedRejected(t *testing.T) {
	d, _ := openTest(t)
	appendOK(t, d, startedEvent(t, "r1", t0, "CUE-100"), taskStartedEvent(t, "r1", "CUE-100/1", "tester", "CUE-100", "handoff", 1))
	good := taskStartedEvent(t, "r1", "CUE-100/2", "tester", "CUE-100", "spawn", 1)
	for _, c := range []struct {
		name string
		ev   record.Event
		want string
	}{
		{"no parent row", taskStartedEvent(t, "r1", "CUE-900/1", "tester", "CUE-900", "handoff", 1), `has no task "CUE-900", the parent of CUE-900/1`},
		{"again", taskStartedEvent(t, "r1", "CUE-100/1", "tester", "CUE-100", "handoff", 1), "already has a task CUE-100/1"},
		{"bad kind", taskStartedEvent(t, "r1", "CUE-100/3", "tester", "CUE-100", "fork", 1), `kind "fork" is neither handoff nor spawn`},
		{"depth 0", taskStartedEvent(t, "r1", "CUE-100/3", "tester", "CUE-100", "spawn", 0), "depth 0"},
		{"id not under parent", taskStartedEvent(t, "r1", "CUE-200/3", "tester", "CUE-100", "spawn", 1), `is not its parent's id "CUE-100" followed by /N`},
		{"id two levels down", taskStartedEvent(t, "r1", "CUE-100/3/4", "tester", "CUE-100", "spawn", 1), "followed by /N"},
		{"no parent", taskStartedEvent(t, "r1", "CUE-100/3", "tester", "", "spawn", 1), "has no parent"},
		{"no agent", func() record.Event { e := good; e.Agent = ""; return e }(), "needs the child's task id (cue) and agent"},
		{"no data", func() record.Event { e := good; e.Data = nil; return e }(), "no data"},
		{"data of another type", func() record.Event { e := good; e.Data = record.AnswerData{ID: "q1"}; return e }(), "must be a record.TaskStartedData"},
	} {
		err := d.Append(context.Background(), c.ev)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	appendOK(t, d, good) // the failures left nothing behind
	r, _ := d.Run(context.Background(), "r1")
	if len(r.Cues) != 3 {
		t.Errorf("%d cue rows", len(r.Cues))
	}
}

func TestQuestionProjection(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	appendOK(t, d, startedEvent(t, "r1", t0, "CUE-100"), taskStartedEvent(t, "r1", "CUE-100/1", "tester", "CUE-100", "handoff", 1))
	q1 := questionEvent(t, "r1", "q1", "CUE-100", "CUE-100-agent", "person")
	q1.At = at(10)
	q2 := questionEvent(t, "r1", "q2", "CUE-100/1", "tester", "CUE-100-agent")
	q2.At = at(11)
	q3 := questionEvent(t, "r1", "q3", "CUE-100/1", "tester", "person")
	q3.At = at(12)
	q4 := questionEvent(t, "r1", "q4", "CUE-100", "CUE-100-agent", "person")
	q4.At = at(13)
	options := []record.QuestionOption{{ID: "approved", Name: "Yes, proceed", Kind: "allow_once"}, {ID: "abort", Name: "No", Kind: "reject_once"}}
	d4 := q4.Data.(record.QuestionData)
	d4.Options = options
	q4.Data = d4
	appendOK(t, d, q1, q2, q3, q4)
	answered := closeEvent(t, "r1", "q1", record.QuestionAnswered, "postgres", "person", "")
	answered.At = at(20)
	appendOK(t, d, answered,
		closeEvent(t, "r1", "q2", record.QuestionUnanswered, "ignored", "ignored", "no answer within 30m"),
		closeEvent(t, "r1", "q3", record.QuestionWithdrawn, "", "", "its asker ended"))

	r, err := d.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Questions) != 4 || r.OpenQuestions != 1 {
		t.Fatalf("%d questions, %d open", len(r.Questions), r.OpenQuestions)
	}
	want := QuestionDetail{ID: "q1", Cue: "CUE-100", Agent: "CUE-100-agent", Attempt: 1, Question: "Which database, q1?",
		Complexity: "quick", To: "person", State: "answered", Answer: "postgres", By: "person", AskedAt: at(10), ClosedAt: at(20), Deadline: at(1800)}
	if !reflect.DeepEqual(r.Questions[0], want) {
		t.Errorf("q1\n%+v\nwant\n%+v", r.Questions[0], want)
	}
	// An unanswered question keeps no answer, whatever the data said.
	if q := r.Questions[1]; q.State != "unanswered" || q.Answer != "" || q.By != "" || q.Reason != "no answer within 30m" || q.To != "CUE-100-agent" {
		t.Errorf("q2 %+v", q)
	}
	if q := r.Questions[2]; q.State != "withdrawn" || q.Reason != "its asker ended" || q.ClosedAt.IsZero() {
		t.Errorf("q3 %+v", q)
	}
	if q := r.Questions[3]; q.State != QuestionOpen || !q.ClosedAt.IsZero() {
		t.Errorf("q4 %+v", q)
	}
	// The answers a question takes are kept with it, for orch answer to check.
	if q, err := d.Question(ctx, "r1", "q4"); err != nil || !reflect.DeepEqual(q.Options, options) {
		t.Errorf("q4's options %+v, %v", q.Options, err)
	}
	rec, err := d.LoadRun(ctx, "r1")
	if err != nil || rec.Questions != 4 || !reflect.DeepEqual(rec.OpenQuestions, []string{"q4"}) {
		t.Errorf("LoadRun: %d questions, open %v, %v", rec.Questions, rec.OpenQuestions, err)
	}
	runs, _, _ := d.Runs(ctx, 0)
	if runs[0].OpenQuestions != 1 {
		t.Errorf("Runs: %d open questions", runs[0].OpenQuestions)
	}
	if q, err := d.Question(ctx, "r1", "q4"); err != nil || q.ID != "q4" || q.State != QuestionOpen {
		t.Errorf("Question(q4) = %+v, %v", q, err)
	}
	if _, err := d.Question(ctx, "r1", "q9"); !errors.Is(err, ErrNoQuestion) {
		t.Errorf("Question(q9) = %v", err)
	}
	if open, err := d.Questions(ctx, "r1", true); err != nil || len(open) != 1 || open[0].ID != "q4" {
		t.Errorf("Questions(open) = %+v, %v", open, err)
	}
}

// Questions come back in the order asked: q10 after q9.
func TestQuestionOrder(t *testing.T) {
	d, _ := openTest(t)
	appendOK(t, d, startedEvent(t, "r1", t0, "a"))
	var evs []record.Event
	for _, id := range []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11"} {
		evs = append(evs, questionEvent(t, "r1", id, "a", "a-agent", "person")) // one transaction: one time
	}
	appendOK(t, d, evs...)
	qs, err := d.Questions(context.Background(), "r1", false)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range qs {
		ids = append(ids, q.ID)
	}
	if strings.Join(ids, " ") != "q1 q2 q3 q4 q5 q6 q7 q8 q9 q10 q11" {
		t.Errorf("order %v", ids)
	}
}

func TestQuestionRejected(t *testing.T) {
	d, _ := openTest(t)
	appendOK(t, d, startedEvent(t, "r1", t0, "a"), questionEvent(t, "r1", "q1", "a", "a-agent", "person"),
		questionEvent(t, "r1", "q2", "a", "a-agent", "person"),
		closeEvent(t, "r1", "q2", record.QuestionAnswered, "yes", "person", ""))
	bad := func(f func(*record.QuestionData)) record.Event {
		d := record.QuestionData{ID: "q3", Question: "why?", Complexity: "deep", To: "person"}
		f(&d)
		return record.Event{RunID: "r1", Type: record.EvQuestion, Cue: "a", Agent: "a-agent", Attempt: 1, Data: d}
	}
	noAttempt := questionEvent(t, "r1", "q3", "a", "a-agent", "person")
	noAttempt.Attempt = 0
	for _, c := range []struct {
		name string
		ev   record.Event
		want string
	}{
		{"unknown cue", questionEvent(t, "r1", "q3", "zzz", "a-agent", "person"), `has no cue "zzz"`},
		{"same id", questionEvent(t, "r1", "q1", "a", "a-agent", "person"), "already has a question q1"},
		{"no attempt", noAttempt, "attempt number"},
		{"no id", bad(func(d *record.QuestionData) { d.ID = "" }), "no id"},
		{"no text", bad(func(d *record.QuestionData) { d.Question = " " }), "has no text"},
		{"complexity", bad(func(d *record.QuestionData) { d.Complexity = "hard" }), `complexity "hard"`},
		{"no to", bad(func(d *record.QuestionData) { d.To = "" }), "nobody it was asked of"},
		{"close unknown", closeEvent(t, "r1", "q9", record.QuestionAnswered, "x", "person", ""), "has no question q9"},
		{"close twice", closeEvent(t, "r1", "q2", record.QuestionUnanswered, "", "", ""), "already answered"},
		{"close bad state", closeEvent(t, "r1", "q1", "open", "", "", ""), `unknown question state "open"`},
		{"close no id", closeEvent(t, "r1", "", record.QuestionAnswered, "x", "person", ""), "names no question"},
		{"close no data", record.Event{RunID: "r1", Type: record.EvQuestionClosed, State: record.QuestionWithdrawn}, "no data"},
	} {
		err := d.Append(context.Background(), c.ev)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if q, _ := d.Question(context.Background(), "r1", "q1"); q.State != QuestionOpen {
		t.Errorf("q1 is %s", q.State)
	}
}

func TestUsageProjection(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	appendOK(t, d, startedEvent(t, "r1", t0, "a"),
		record.Event{RunID: "r1", At: t0, Type: record.EvAttemptStarted, Cue: "a", Agent: "a-agent", Attempt: 1, State: string(record.AttemptRunning), Data: record.AttemptStartedData{}})
	usage := func(credits, total float64) record.Event {
		return record.Event{RunID: "r1", Type: record.EvUsage, Cue: "a", Agent: "a-agent", Attempt: 1,
			Data: record.UsageData{Credits: credits, RunTotal: total, CostUSD: credits / 10, RunCostUSD: total / 10,
				InputTokens: 100, OutputTokens: 7, RunInputTokens: 100, RunOutputTokens: 7}}
	}
	appendOK(t, d, usage(10, 10), usage(25.5, 25.5))
	r, err := d.Run(ctx, "r1")
	if err != nil || r.Credits != 25.5 {
		t.Fatalf("credits %g, %v", r.Credits, err)
	}
	if want := (record.Usage{CostUSD: 2.55, InputTokens: 100, OutputTokens: 7, Credits: 25.5}); r.Used != want || r.Cues[0].Used() != want {
		t.Errorf("run used %+v, cue used %+v, want %+v", r.Used, r.Cues[0].Used(), want)
	}
	if rec, err := d.LoadRun(ctx, "r1"); err != nil || rec.Used.Credits != 25.5 || rec.Used.CostUSD != 2.55 {
		t.Errorf("LoadRun used %+v, %v", rec.Used, err)
	}
	negativeCost := usage(1, 1)
	negativeCost.Data = record.UsageData{CostUSD: -1}
	for _, ev := range []record.Event{usage(-1, 3), negativeCost, {RunID: "r1", Type: record.EvUsage}, {RunID: "r1", Type: record.EvUsage, Data: record.CooldownData{}}} {
		if err := d.Append(ctx, ev); err == nil {
			t.Errorf("%+v accepted", ev.Data)
		}
	}
}
