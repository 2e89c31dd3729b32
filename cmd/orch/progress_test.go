package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner"
)

// At a terminal a question shows its complexity first, then the text, and
// the line typed is the answer; Enter alone leaves it for orch answer.
func TestTerminalQuestionPrompt(t *testing.T) {
	in, typed := io.Pipe()
	var out syncBuffer
	p := newLiveProgress(&out, in, false)
	defer p.stop()
	q := runner.QuestionPrompt{ID: "q2", Complexity: "deep", Question: "ship on friday?", Agent: "coder", Cue: "CODE-100"}
	go func() { _, _ = io.WriteString(typed, "yes, ship it\n\n") }()
	answer, ok := p.question(context.Background(), q)
	if !ok || answer != "yes, ship it" {
		t.Fatalf("answer %q %v", answer, ok)
	}
	shown := out.String()
	if i, j := strings.Index(shown, "[deep] question q2 from coder (CODE-100)"), strings.Index(shown, "ship on friday?"); i < 0 || j < i {
		t.Errorf("the complexity is not shown first:\n%s", shown)
	}
	if _, ok := p.question(context.Background(), q); ok {
		t.Error("an empty line answered the question")
	}
	// Answered elsewhere (orch answer): the prompt gives up.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, ok := p.question(ctx, q); ok {
		t.Error("a cancelled prompt answered")
	}
}

// notify: summary shows the person's questions as one line now and then,
// never one by one; questions for agents and other events pass through.
func TestSummaryNotify(t *testing.T) {
	old := summaryEvery
	summaryEvery = 0
	defer func() { summaryEvery = old }()
	var out syncBuffer
	s := newSummaryProgress(&plainProgress{w: &out})
	ev := func(typ, agent, cue string, data runner.EventData) runner.Event {
		return runner.Event{RunID: "abc", Type: typ, Agent: agent, Cue: cue, At: time.Now(), Data: data}
	}
	s.event(ev(runner.EvRunStarted, "", "", runner.RunStartedData{}))
	s.event(ev(runner.EvQuestion, "coder", "C", runner.QuestionData{ID: "q1", Complexity: "deep", Question: "ship?", To: "person"}))
	s.event(ev(runner.EvQuestion, "tester", "C/1", runner.QuestionData{ID: "q2", Complexity: "quick", Question: "port?", To: "coder"}))
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "open question(s)") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()
	shown := out.String()
	if strings.Contains(shown, "? q1") {
		t.Errorf("the person's question was shown one by one:\n%s", shown)
	}
	if !strings.Contains(shown, "1 open question(s): q1 [deep] coder (C)") || !strings.Contains(shown, "orch answer abc QID TEXT") {
		t.Errorf("no summary:\n%s", shown)
	}
	if !strings.Contains(shown, "? q2 [quick] tester (C/1) asks coder: port?") {
		t.Errorf("a question for an agent was not passed through:\n%s", shown)
	}
}
