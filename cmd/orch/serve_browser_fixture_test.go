//go:build browser && linux

package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// recording builds a run's events with fixed times (the pages show them).
type recording struct {
	run    string
	at     time.Time
	after  map[string][]string // each cue's dependencies, as the run records them
	events []record.Event
}

func (r *recording) add(gap time.Duration, ev record.Event) {
	r.at = r.at.Add(gap)
	ev.RunID, ev.At = r.run, r.at
	r.events = append(r.events, ev)
}

func (r *recording) start(cuelist string, cues ...string) {
	info := make([]record.CueInfo, len(cues))
	for i, c := range cues {
		info[i] = record.CueInfo{ID: c, Agents: []string{"worker"}, After: r.after[c]}
	}
	r.add(0, record.Event{Type: record.EvRunStarted, Data: record.RunStartedData{Cuelist: cuelist, Cues: info}})
	r.add(time.Millisecond, record.Event{Type: record.EvRunState, State: string(record.RunRunning)})
}

// cue takes cue through its phases and one attempt per outcome (the last
// one decides), each took long.
func (r *recording) cue(cue string, took time.Duration, outcomes ...string) {
	for _, ph := range []record.CueState{record.CueWarning, record.CueStandby, record.CueGo} {
		r.add(10*time.Millisecond, record.Event{Type: record.EvCueState, Cue: cue, State: string(ph)})
	}
	for i, o := range outcomes {
		r.add(10*time.Millisecond, record.Event{Type: record.EvAttemptStarted, Cue: cue, Agent: "worker", Attempt: i + 1, Data: record.AttemptStartedData{}})
		reason := ""
		if o == "failed" {
			reason = "exit status 1: 3 tests failed"
		}
		r.add(took, record.Event{Type: record.EvAttemptEnded, Cue: cue, Agent: "worker", Attempt: i + 1, State: o, Reason: reason,
			Data: record.AttemptEndedData{Outputs: map[string]any{"summary": cue + " " + o}}})
	}
	last := outcomes[len(outcomes)-1]
	if last == "completed" {
		r.add(time.Millisecond, record.Event{Type: record.EvCueState, Cue: cue, State: last, Data: record.CueStateData{Outputs: map[string]any{"summary": cue + " done"}}})
	} else {
		r.add(time.Millisecond, record.Event{Type: record.EvCueState, Cue: cue, State: last, Reason: "worker: exit status 1: 3 tests failed"})
	}
}

func (r *recording) state(cue, state, reason string) {
	r.add(time.Millisecond, record.Event{Type: record.EvCueState, Cue: cue, State: state, Reason: reason})
}

func (r *recording) end(state, reason string) {
	r.add(time.Millisecond, record.Event{Type: record.EvRunState, State: state, Reason: reason})
}

func (r *recording) save(t *testing.T, w *store.DB) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < len(r.events); i += 5000 {
		if err := w.Append(ctx, r.events[i:min(i+5000, len(r.events))]...); err != nil {
			t.Fatal(err)
		}
	}
}

var fixtureStart = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// releaseID is the run of the screenshots: a release pipeline where the
// end-to-end tests failed (after a retry), so the deploys are blocked.
const releaseID = "3f9a1c2e7b40"

var releaseAfter = map[string][]string{
	"BUILD": nil, "LINT": nil, "TEST-UNIT": {"BUILD"}, "TEST-E2E": {"BUILD"}, "PACKAGE": {"BUILD", "LINT"},
	"DEPLOY-STAGING": {"PACKAGE", "TEST-UNIT", "TEST-E2E"}, "DEPLOY-PROD": {"DEPLOY-STAGING"}, "DOCS": {"LINT"},
}

// screensDB records a few runs with fixed content: the release run, runs
// of other cuelists, and a paused run with a question for the person.
func screensDB(t *testing.T, path string) {
	t.Helper()
	w, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	at := fixtureStart
	for i, name := range []string{"nightly-docs", "research", "nightly-docs", "migrate-db", "research"} {
		r := &recording{run: fmt.Sprintf("a%02d7c1d0e5f9", i), at: at.Add(time.Duration(i) * time.Hour)}
		r.start(name, "FETCH", "SUMMARISE", "PUBLISH")
		r.cue("FETCH", 40*time.Second, "completed")
		r.cue("SUMMARISE", 3*time.Minute, "completed")
		if i == 3 {
			r.cue("PUBLISH", 20*time.Second, "failed")
			r.end("failed", "PUBLISH failed")
		} else {
			r.cue("PUBLISH", 20*time.Second, "completed")
			r.end("completed", "")
		}
		r.save(t, w)
	}
	rel := &recording{run: releaseID, at: at.Add(6 * time.Hour), after: releaseAfter}
	rel.start("release", "BUILD", "LINT", "TEST-UNIT", "TEST-E2E", "PACKAGE", "DEPLOY-STAGING", "DEPLOY-PROD", "DOCS")
	rel.cue("BUILD", 90*time.Second, "completed")
	rel.cue("LINT", 25*time.Second, "completed")
	rel.cue("TEST-UNIT", 2*time.Minute, "completed")
	rel.cue("PACKAGE", 40*time.Second, "completed")
	rel.cue("TEST-E2E", 4*time.Minute, "failed", "failed")
	rel.state("DOCS", "skipped", "when: inputs.docs is false")
	rel.state("DEPLOY-STAGING", "blocked", "TEST-E2E failed")
	rel.state("DEPLOY-PROD", "blocked", "DEPLOY-STAGING blocked")
	rel.end("failed", "TEST-E2E failed")
	rel.save(t, w)

	ask := &recording{run: "c4e2b9a1f036", at: at.Add(7 * time.Hour)}
	ask.start("triage", "READ", "DECIDE")
	ask.cue("READ", 30*time.Second, "completed")
	for _, ph := range []string{"warning", "standby", "go"} {
		ask.state("DECIDE", ph, "")
	}
	ask.add(time.Second, record.Event{Type: record.EvAttemptStarted, Cue: "DECIDE", Agent: "worker", Attempt: 1, Data: record.AttemptStartedData{}})
	ask.add(time.Second, record.Event{Type: record.EvQuestion, Cue: "DECIDE", Agent: "worker", Attempt: 1,
		Data: record.QuestionData{ID: "q1", Question: "Close issue 412 as a duplicate of 398?", Complexity: "quick", To: "person", Deadline: at.Add(30 * 24 * time.Hour)}})
	ask.end("paused", "waiting for an answer")
	ask.save(t, w)
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// perfDB records runs small runs and one run "big" of layers x width cues,
// each cue after two of the layer before.
func perfDB(t *testing.T, path string, runs, layers, width int) {
	t.Helper()
	w, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	all := &recording{at: fixtureStart}
	for i := 0; i < runs; i++ {
		all.run = fmt.Sprintf("p%011d", i)
		all.start("load-"+fmt.Sprint(i%7), "A", "B", "C")
		all.cue("A", time.Second, "completed")
		all.cue("B", time.Second, "completed")
		all.state("C", "skipped", "")
		all.end("completed", "")
	}
	all.save(t, w)
	after := map[string][]string{}
	ids := make([]string, 0, layers*width)
	for l := 0; l < layers; l++ {
		for k := 0; k < width; k++ {
			id := fmt.Sprintf("L%03d-%03d", l, k)
			ids = append(ids, id)
			if l > 0 {
				after[id] = []string{fmt.Sprintf("L%03d-%03d", l-1, k), fmt.Sprintf("L%03d-%03d", l-1, (k*7+3)%width)}
			}
		}
	}
	big := &recording{run: "big000000000", at: fixtureStart.Add(24 * time.Hour), after: after}
	big.start("big", ids...)
	for _, id := range ids {
		big.cue(id, time.Second, "completed")
	}
	big.end("completed", "")
	big.save(t, w)
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}
