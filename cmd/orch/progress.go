package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
)

// progress shows a run as it happens.
type progress interface {
	event(e record.Event)
	// note prints a line that is not an event (a summary of open questions).
	note(line string)
	// printAbove prints a line as it is (an agent's output, --stream), never
	// inside what the display redraws.
	printAbove(line string)
	// ask suspends the display, asks a yes/no question on the terminal and
	// returns the answer (false when ctx ends first).
	ask(ctx context.Context, question string) bool
	// question puts an agent's question to the person at the terminal: its
	// complexity first, then the text; ok is false for an empty answer or
	// when ctx ends first (the question was answered otherwise).
	question(ctx context.Context, q runner.QuestionPrompt) (answer string, ok bool)
	stop()
}

// plainProgress prints one timestamped line per event that matters (not
// protocol messages or blackboard versions): for CI logs and pipes.
// A failed attempt is followed by the last lines its agent printed.
type plainProgress struct {
	mu   sync.Mutex
	w    io.Writer
	tail tailFunc // nil: no output shown
}

func (p *plainProgress) event(e record.Event) {
	if e.Type == record.EvMessage {
		return
	}
	var tail []string
	if e.Type == record.EvAttemptEnded && e.State == string(record.AttemptFailed) && p.tail != nil {
		tail = p.tail(e)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s %s\n", e.At.Local().Format("15:04:05.000"), describeEvent(e))
	for _, l := range tailBlock("    ", e.Agent, e.Attempt, tail) {
		fmt.Fprintln(p.w, l)
	}
}

func (p *plainProgress) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s %s\n", time.Now().Format("15:04:05.000"), line)
}

func (p *plainProgress) printAbove(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, line)
}

func (p *plainProgress) ask(context.Context, string) bool { return false }
func (p *plainProgress) question(context.Context, runner.QuestionPrompt) (string, bool) {
	return "", false
}
func (p *plainProgress) stop() {}

// jsonProgress streams every event as one JSON object per line.
type jsonProgress struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (p *jsonProgress) event(e record.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.enc.Encode(e)
}

func (p *jsonProgress) note(string)                      {}
func (p *jsonProgress) printAbove(string)                {} // --stream is text only
func (p *jsonProgress) ask(context.Context, string) bool { return false }
func (p *jsonProgress) question(context.Context, runner.QuestionPrompt) (string, bool) {
	return "", false
}
func (p *jsonProgress) stop() {}
