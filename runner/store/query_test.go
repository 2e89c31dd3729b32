package store

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

func TestRuns(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	if runs, total, err := d.Runs(ctx, 20); err != nil || len(runs) != 0 || total != 0 {
		t.Fatalf("Runs on an empty database = %v %d %v", runs, total, err)
	}
	// Started out of id order, to see the list follows started_at.
	for i, id := range []string{"c3", "a1", "b2"} {
		appendOK(t, d, startedEvent(t, id, at(i), "x", "y", "z", "w"))
	}
	appendOK(t, d,
		record.Event{RunID: "a1", Type: record.EvCueState, Cue: "x", State: "completed"},
		record.Event{RunID: "a1", Type: record.EvCueState, Cue: "y", State: "failed"},
		record.Event{RunID: "a1", Type: record.EvCueState, Cue: "z", State: "standby"},
		record.Event{RunID: "a1", Type: record.EvRunState, At: at(9), State: "failed", Reason: "y failed"},
	)
	runs, total, err := d.Runs(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []RunSummary{
		{ID: "b2", Cuelist: "deploy", State: record.RunInterrupted, StartedAt: at(2), EndedAt: at(2), Cues: 4}, // its owner is long gone: ended at its last event
		{ID: "a1", Cuelist: "deploy", State: record.RunFailed, Reason: "y failed", StartedAt: at(1), EndedAt: at(9),
			Cues: 4, Completed: 1, Failed: 1, Active: 1},
	}
	if total != 3 || !reflect.DeepEqual(runs, want) {
		t.Errorf("Runs(2) = %d\n%+v\nwant\n%+v", total, runs, want)
	}
	if runs, _, _ := d.Runs(ctx, 0); len(runs) != 3 || runs[2].ID != "c3" {
		t.Errorf("Runs(0) = %+v", runs)
	}
}

func TestResolveRun(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	if _, err := d.ResolveRun(ctx, "last"); !errors.Is(err, ErrNoRuns) {
		t.Fatalf("ResolveRun on an empty database = %v, want ErrNoRuns", err)
	}
	for i, id := range []string{"abc123", "abd456", "b77", "b7", "x1", "x2", "x3", "x4", "x5", "x6"} {
		appendOK(t, d, startedEvent(t, id, at(10-i)))
	}
	for _, c := range []struct {
		ref, want string
		notFound  bool
		ambiguous []string
		more      bool
	}{
		{ref: "abc123", want: "abc123"},
		{ref: "abc", want: "abc123"},
		{ref: "last", want: "abc123"}, // the most recently started
		{ref: "b7", want: "b7"},       // a whole id, though also a prefix of b77
		{ref: "ab", ambiguous: []string{"abc123", "abd456"}},
		{ref: "x", ambiguous: []string{"x1", "x2", "x3", "x4", "x5"}, more: true},
		{ref: "zz", notFound: true},
		{ref: "abc1234", notFound: true},
		{ref: "", notFound: true},
	} {
		got, err := d.ResolveRun(ctx, c.ref)
		var nf *NotFoundError
		var amb *AmbiguousError
		switch {
		case c.notFound:
			if !errors.As(err, &nf) || nf.Ref != c.ref {
				t.Errorf("ResolveRun(%q) = %q, %v; want not found", c.ref, got, err)
			}
		case c.ambiguous != nil:
			if !errors.As(err, &amb) || !reflect.DeepEqual(amb.Matches, c.ambiguous) || amb.More != c.more {
				t.Errorf("ResolveRun(%q) = %q, %v; want ambiguous %v", c.ref, got, err, c.ambiguous)
			}
		default:
			if err != nil || got != c.want {
				t.Errorf("ResolveRun(%q) = %q, %v; want %q", c.ref, got, err, c.want)
			}
		}
	}
	_, err := d.ResolveRun(ctx, "ab")
	if want := `run prefix "ab" is ambiguous: abc123, abd456; give more characters`; err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
}

func TestRunDetailNotFound(t *testing.T) {
	d, _ := openTest(t)
	var nf *NotFoundError
	if _, err := d.Run(context.Background(), "nope"); !errors.As(err, &nf) {
		t.Errorf("Run(nope) = %v", err)
	}
}

func TestEventsPaging(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	startRun(t, d, "r2", "a")
	for i := range 25 {
		appendOK(t, d, record.Event{RunID: "r1", Type: record.EvExhausted, Cue: "a", Agent: "x", Attempt: 2,
			State: "s", Reason: strconv.Itoa(i), Data: record.ExhaustedData{Limit: "max_credits", Used: strconv.Itoa(i)}})
		appendOK(t, d, record.Event{RunID: "r2", Type: record.EvNote})
	}
	var all []record.Event
	for after := int64(0); ; {
		page, err := d.Events(ctx, "r1", after, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 10 {
			t.Fatalf("page of %d", len(page))
		}
		all = append(all, page...)
		after = page[len(page)-1].Seq
	}
	if len(all) != 26 {
		t.Fatalf("%d events", len(all))
	}
	for i, ev := range all[1:] {
		if ev.Seq != int64(i+2) || ev.RunID != "r1" || ev.Reason != strconv.Itoa(i) || ev.Cue != "a" || ev.Agent != "x" ||
			ev.Attempt != 2 || ev.State != "s" || ev.Data != (record.ExhaustedData{Limit: "max_credits", Used: strconv.Itoa(i)}) || ev.At.IsZero() {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
	if all[0].Type != record.EvRunStarted || all[0].Data == nil {
		t.Errorf("first event %+v", all[0])
	}
}

func TestLogsPaging(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a", "b")
	startRun(t, d, "r2", "a")
	when := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	for i := range 30 {
		d.Log(record.LogLine{RunID: "r1", Cue: []string{"a", "b", "a"}[i%3], Agent: "ag", Attempt: 1, Stream: "stdout",
			At: when, Text: strconv.Itoa(i)})
		d.Log(record.LogLine{RunID: "r2", Cue: "a", Stream: "stderr", Text: "other run"})
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cue  string
		want int
	}{{"", 30}, {"a", 20}, {"b", 10}, {"zz", 0}} {
		var got []LogRecord
		for after := int64(0); ; {
			page, err := d.Logs(ctx, "r1", c.cue, after, 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			after = page[len(page)-1].ID
		}
		if len(got) != c.want {
			t.Errorf("Logs(cue %q) = %d lines, want %d", c.cue, len(got), c.want)
		}
		for i, l := range got {
			if (c.cue != "" && l.Cue != c.cue) || l.RunID != "r1" || !l.At.Equal(when) || (i > 0 && l.ID <= got[i-1].ID) {
				t.Errorf("Logs(cue %q) line %d: %+v", c.cue, i, l)
			}
		}
	}
}

func TestRunState(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a") // its owner, pid 42 on "box", is long gone
	if s, err := d.RunState(ctx, "r1"); err != nil || s != record.RunInterrupted {
		t.Errorf("RunState(r1) = %s, %v", s, err)
	}
	appendOK(t, d, record.Event{RunID: "r1", Type: record.EvRunState, State: "completed"})
	if s, err := d.RunState(ctx, "r1"); err != nil || s != record.RunCompleted {
		t.Errorf("RunState(r1) = %s, %v", s, err)
	}
	var nf *NotFoundError
	if _, err := d.RunState(ctx, "nope"); !errors.As(err, &nf) {
		t.Errorf("RunState(nope) = %v", err)
	}
}
