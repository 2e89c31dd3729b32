package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
)

// At a terminal a question shows its complexity first, then the text, and
// the line typed is the answer; Enter alone leaves it for orch answer.
func TestTerminalQuestionPrompt(t *testing.T) {
	in, typed := io.Pipe()
	var out syncBuffer
	p := newLiveProgress(&out, liveOptions{promptR: in})
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

// At the terminal, a question with options (an ACP permission request)
// takes an answer that names one: an answer that names none is refused there
// with the options listed, and the question is asked again.
func TestTerminalQuestionOptions(t *testing.T) {
	in, typed := io.Pipe()
	var out syncBuffer
	p := newLiveProgress(&out, liveOptions{promptR: in})
	defer p.stop()
	q := runner.QuestionPrompt{ID: "q1", Complexity: "quick", Question: "codex asks permission for edit", Agent: "codex", Cue: "c",
		Options: []record.QuestionOption{{ID: "approved", Name: "Yes, proceed"}, {ID: "abort", Name: "No"}}}
	go func() { _, _ = io.WriteString(typed, "maybe\nYES\n") }()
	answer, ok := p.question(context.Background(), q)
	if !ok || answer != "YES" {
		t.Fatalf("answer %q %v", answer, ok)
	}
	shown := out.String()
	if !strings.Contains(shown, `the answer "maybe" names none of the options`) || !strings.Contains(shown, "1) Yes, proceed (id approved)") {
		t.Errorf("the refusal and the options are not shown:\n%s", shown)
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
	ev := func(typ, agent, cue string, data record.EventData) record.Event {
		return record.Event{RunID: "abc", Type: typ, Agent: agent, Cue: cue, At: time.Now(), Data: data}
	}
	s.event(ev(record.EvRunStarted, "", "", record.RunStartedData{}))
	s.event(ev(record.EvQuestion, "coder", "C", record.QuestionData{ID: "q1", Complexity: "deep", Question: "ship?", To: "person"}))
	s.event(ev(record.EvQuestion, "tester", "C/1", record.QuestionData{ID: "q2", Complexity: "quick", Question: "port?", To: "coder"}))
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

// The block never grows taller than the terminal (the cursor could not go
// back to its top): agents that do not fit are counted on one line.
func TestLiveBlockFitsTheScreen(t *testing.T) {
	var out syncBuffer
	var cues []record.CueInfo
	for i := range 30 {
		cues = append(cues, record.CueInfo{ID: fmt.Sprintf("CUE-%02d", i), Agents: []string{"a", "b"}})
	}
	p := newLiveProgress(&out, liveOptions{size: func() (int, int) { return 40, 12 }, cues: cues})
	defer p.stop()
	for _, c := range cues {
		p.event(record.Event{RunID: "abc", Type: record.EvCueState, Cue: c.ID, State: string(record.CueGo), At: time.Now()})
	}
	p.mu.Lock()
	lines, _ := p.block(40, 12)
	p.mu.Unlock()
	if len(lines) > 11 {
		t.Errorf("a block of %d lines on a screen of 12:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	shown, more := 0, 0
	for _, l := range lines {
		if strings.Contains(l, " go      CUE-") || strings.HasSuffix(l, " b") {
			shown++
		}
	}
	if _, err := fmt.Sscanf(lines[len(lines)-1], "  … and %d more", &more); err != nil || shown+more != 60 {
		t.Errorf("%d agent lines shown and %q, want the 60 agents counted:\n%s", shown, lines[len(lines)-1], strings.Join(lines, "\n"))
	}
	if !strings.Contains(strings.Join(lines[:3], " "), "30 running") {
		t.Errorf("the header does not count the running cues: %q", lines[:3])
	}
}
