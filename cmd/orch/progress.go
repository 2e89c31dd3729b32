package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner"
)

// progress shows a run as it happens.
type progress interface {
	event(e runner.Event)
	// note prints a line that is not an event (a summary of open questions).
	note(line string)
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
type plainProgress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *plainProgress) event(e runner.Event) {
	if e.Type == runner.EvMessage {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s %s\n", e.At.Local().Format("15:04:05.000"), describeEvent(e))
}

func (p *plainProgress) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s %s\n", time.Now().Format("15:04:05.000"), line)
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

func (p *jsonProgress) event(e runner.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.enc.Encode(e)
}

func (p *jsonProgress) note(string)                      {}
func (p *jsonProgress) ask(context.Context, string) bool { return false }
func (p *jsonProgress) question(context.Context, runner.QuestionPrompt) (string, bool) {
	return "", false
}
func (p *jsonProgress) stop() {}

// liveProgress redraws, in place, one line per active cue with its phase and
// elapsed time; each cue that ends is printed once above them.
type liveProgress struct {
	mu     sync.Mutex
	w      io.Writer
	in     *bufio.Reader
	color  bool
	active map[string]*liveCue
	drawn  int // lines of the live block currently on screen
	paused bool
	quit   chan struct{}
	done   chan struct{}

	promptMu  sync.Mutex  // one prompt at a time
	lines     chan string // the terminal's input, read by one goroutine
	linesOnce sync.Once
}

type liveCue struct {
	id     string
	phase  string
	agent  string
	since  time.Time
	start  time.Time
	number int
}

func newLiveProgress(w io.Writer, in io.Reader, color bool) *liveProgress {
	p := &liveProgress{w: w, in: bufio.NewReader(in), color: color, active: map[string]*liveCue{},
		quit: make(chan struct{}), done: make(chan struct{})}
	go p.tick()
	return p
}

func (p *liveProgress) tick() {
	defer close(p.done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
			p.mu.Lock()
			p.redraw()
			p.mu.Unlock()
		}
	}
}

func (p *liveProgress) event(e runner.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Type {
	case runner.EvCueState:
		c := p.active[e.Cue]
		if c == nil {
			c = &liveCue{id: e.Cue, start: e.At}
			p.active[e.Cue] = c
		}
		c.phase, c.since = e.State, e.At
		if runner.CueState(e.State).Final() || e.State == string(runner.CuePending) {
			delete(p.active, e.Cue)
			if e.State != string(runner.CuePending) {
				p.above(p.finalLine(c, e))
			}
		}
	case runner.EvAttemptStarted:
		if c := p.active[e.Cue]; c != nil {
			c.agent, c.number = e.Agent, e.Attempt
		}
	case runner.EvAttemptEnded:
		if e.State == string(runner.AttemptFailed) {
			p.above(p.paint("33", "  ! ") + describeEvent(e))
		}
	case runner.EvNote, runner.EvCooldown, runner.EvManualGo, runner.EvTaskStarted, runner.EvQuestionClosed, runner.EvGuard:
		p.above("  " + describeEvent(e))
	case runner.EvUserMessage:
		p.above(p.paint("36", "  ✉ ") + describeEvent(e))
	case runner.EvExhausted:
		p.above(p.paint("31", "  ! ") + describeEvent(e))
	case runner.EvQuestion:
		// The person's questions are prompted (or summarised); undecodable
		// data (the zero value) is shown.
		d, _ := e.Data.(runner.QuestionData)
		if d.To != "person" {
			p.above("  " + describeEvent(e))
		}
	}
}

func (p *liveProgress) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.above(p.paint("35", "  ? ") + line)
}

func (p *liveProgress) finalLine(c *liveCue, e runner.Event) string {
	took := shortDuration(e.At.Sub(c.start))
	switch runner.CueState(e.State) {
	case runner.CueCompleted:
		return fmt.Sprintf("%s %s completed in %s", p.paint("32", "✓"), e.Cue, took)
	case runner.CueFailed:
		return fmt.Sprintf("%s %s failed: %s", p.paint("31", "✗"), e.Cue, e.Reason)
	}
	return fmt.Sprintf("%s %s %s: %s", p.paint("2", "-"), e.Cue, e.State, e.Reason)
}

func (p *liveProgress) paint(code, s string) string {
	if !p.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// above prints a permanent line above the live block.
func (p *liveProgress) above(line string) {
	p.clear()
	fmt.Fprintln(p.w, line)
	p.redraw()
}

// clear erases the live block.
func (p *liveProgress) clear() {
	for ; p.drawn > 0; p.drawn-- {
		fmt.Fprint(p.w, "\x1b[1A\x1b[2K")
	}
}

func (p *liveProgress) redraw() {
	if p.paused {
		return
	}
	p.clear()
	cues := make([]*liveCue, 0, len(p.active))
	for _, c := range p.active {
		cues = append(cues, c)
	}
	sort.Slice(cues, func(i, j int) bool {
		return cues[i].start.Before(cues[j].start) || cues[i].start.Equal(cues[j].start) && cues[i].id < cues[j].id
	})
	spin := `|/-\`[time.Now().UnixMilli()/100%4]
	const maxLines = 20
	for i, c := range cues {
		if i == maxLines {
			fmt.Fprintf(p.w, "  ... and %d more\n", len(cues)-maxLines)
			p.drawn++
			break
		}
		fmt.Fprintf(p.w, "  %c %-20s %-8s %-24s %s\n", spin, c.id, c.phase, c.agent, shortDuration(time.Since(c.since)))
		p.drawn++
	}
}

func (p *liveProgress) ask(ctx context.Context, question string) bool {
	line, ok := p.prompt(ctx, question+" [y/N] ")
	answer := strings.ToLower(strings.TrimSpace(line))
	return ok && (answer == "y" || answer == "yes")
}

func (p *liveProgress) question(ctx context.Context, q runner.QuestionPrompt) (string, bool) {
	text := fmt.Sprintf("%s question %s from %s (%s)\n  %s\n  answer (Enter alone leaves it for orch answer): ",
		p.paint("35", "["+q.Complexity+"]"), q.ID, q.Agent, q.Cue, q.Question)
	line, ok := p.prompt(ctx, text)
	line = strings.TrimSpace(line)
	return line, ok && line != ""
}

// prompt suspends the live block, prints text and reads one line; ok is
// false when ctx ends first or the input is closed.
func (p *liveProgress) prompt(ctx context.Context, text string) (string, bool) {
	p.promptMu.Lock()
	defer p.promptMu.Unlock()
	if ctx.Err() != nil {
		return "", false
	}
	p.linesOnce.Do(func() {
		p.lines = make(chan string)
		go func() {
			defer close(p.lines)
			for {
				line, err := p.in.ReadString('\n')
				if err != nil {
					return
				}
				p.lines <- line
			}
		}()
	})
	p.mu.Lock()
	p.paused = true
	p.clear()
	fmt.Fprint(p.w, text)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.paused = false
		p.mu.Unlock()
	}()
	select {
	case line, ok := <-p.lines:
		return line, ok
	case <-ctx.Done():
		fmt.Fprintln(p.w, "(answered elsewhere)")
		return "", false
	}
}

func (p *liveProgress) stop() {
	close(p.quit)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}
