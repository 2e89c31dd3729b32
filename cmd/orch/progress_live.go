package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// liveProgress is orch run on a terminal. At the bottom of the screen it
// redraws, in place, a block: a header (run, elapsed, counts), one line per
// agent of each active cue, and below them the prompt (a manual GO, a
// question for the person) with the answer being typed. Everything else
// (a cue that ends, a failure with its agent's last lines, a note) is
// printed once above the block. Every line is cut to the terminal's width,
// read at each redraw; a resize redraws at once. Nothing is printed into
// the prompt: it is part of the block.
type liveProgress struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
	size  func() (cols, rows int) // the terminal's size now; 0: unknown
	tail  tailFunc

	runID   string
	started time.Time
	plan    map[string]bool            // the plan's cues (the counts are theirs)
	agents  map[string][]string        // each plan cue's agents, in order
	states  map[string]record.CueState // the plan cues' states
	active  map[string]*liveCue
	prompt  *livePrompt // on show, or nil
	drawn   int         // rows of the block on screen
	cursor  int         // the block's row the cursor is on

	quit chan struct{}
	done chan struct{}

	promptMu sync.Mutex // one prompt at a time
	keys     *keyReader // nil: prompts never asked (no terminal input)
	cooked   bool       // the terminal echoes and edits lines itself
	restore  func()     // puts the terminal's modes back
	resize   chan os.Signal
	noResize func()
	rest     []byte // typed after the last prompt's answer (line mode)
}

type liveCue struct {
	id     string
	phase  string
	start  time.Time
	agents []*liveAgent // the cue's agents, then fallbacks as they start
}

type liveAgent struct {
	id      string
	attempt int
	state   string // "" until it ends: completed, failed
	report  string // what it reported of its state while at work (status.report): "blocked 40%"
}

type livePrompt struct {
	text   []string // the question, above the answer line
	label  string   // before the answer
	editor lineEditor
}

// liveOptions configure the live display.
type liveOptions struct {
	color   bool
	size    func() (cols, rows int)
	tail    tailFunc
	cues    []record.CueInfo           // the plan's cues and agents, in plan order
	states  map[string]record.CueState // of a continued run: where its cues are
	input   *os.File                   // the terminal the prompts read, or nil
	promptR io.Reader                  // for tests: prompts read this (line mode)
}

func newLiveProgress(w io.Writer, o liveOptions) *liveProgress {
	p := &liveProgress{w: w, color: o.color, size: o.size, tail: o.tail, plan: map[string]bool{}, agents: map[string][]string{},
		states: map[string]record.CueState{}, active: map[string]*liveCue{}, started: time.Now(),
		quit: make(chan struct{}), done: make(chan struct{}), resize: make(chan os.Signal, 1), cooked: true}
	if p.size == nil {
		p.size = func() (int, int) { return 0, 0 }
	}
	for _, c := range o.cues {
		p.plan[c.ID], p.agents[c.ID], p.states[c.ID] = true, c.Agents, record.CuePending
	}
	for id, s := range o.states {
		if p.plan[id] {
			p.states[id] = s
		}
	}
	switch {
	case o.input != nil:
		if restore, ok := cbreak(o.input); ok {
			p.restore, p.cooked = restore, false
		}
		p.keys = newKeyReader(o.input)
	case o.promptR != nil:
		p.keys = newKeyReader(o.promptR)
	}
	p.noResize = notifyResize(p.resize)
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
		case <-p.resize:
		}
		p.mu.Lock()
		p.redraw()
		p.mu.Unlock()
	}
}

func (p *liveProgress) event(e record.Event) {
	var tail []string
	if e.Type == record.EvAttemptEnded && e.State == string(record.AttemptFailed) && p.tail != nil {
		tail = p.tail(e) // read before the lock: the display does not wait for the store
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runID == "" && e.RunID != "" {
		p.runID = e.RunID
	}
	switch e.Type {
	case record.EvRunStarted:
		p.started = e.At
		d, _ := e.Data.(record.RunStartedData) // undecodable: no cues to add
		for _, c := range d.Cues {
			if !p.plan[c.ID] {
				p.plan[c.ID], p.agents[c.ID], p.states[c.ID] = true, c.Agents, record.CuePending
			}
		}
	case record.EvCueState:
		if p.plan[e.Cue] {
			p.states[e.Cue] = record.CueState(e.State)
		}
		c := p.active[e.Cue]
		if c == nil {
			c = &liveCue{id: e.Cue, start: e.At}
			for _, a := range p.agents[e.Cue] {
				c.agents = append(c.agents, &liveAgent{id: a})
			}
			p.active[e.Cue] = c
		}
		c.phase = e.State
		if record.CueState(e.State).Final() || e.State == string(record.CuePending) {
			delete(p.active, e.Cue)
			if e.State != string(record.CuePending) {
				p.above(p.finalLine(c, e))
			}
		}
	case record.EvAttemptStarted:
		if c := p.active[e.Cue]; c != nil {
			a := c.agent(e.Agent)
			a.attempt, a.state, a.report = e.Attempt, "", ""
		}
	case record.EvAttemptEnded:
		if c := p.active[e.Cue]; c != nil {
			c.agent(e.Agent).state = e.State
		}
		if e.State == string(record.AttemptFailed) {
			p.above(append([]string{p.paint("33", "  ! ") + describeEvent(e)}, tailBlock("    ", e.Agent, e.Attempt, tail)...)...)
		}
	case record.EvNote, record.EvCooldown, record.EvManualGo, record.EvTaskStarted, record.EvQuestionClosed, record.EvGuard:
		p.above("  " + describeEvent(e))
	case record.EvFanOut: // each item is worked on by its cue's agents
		d, _ := e.Data.(record.FanOutData)
		for _, it := range d.Items {
			p.agents[it.ID] = p.agents[e.Cue]
		}
		p.above("  " + describeEvent(e))
	case record.EvMerge: // a merge's steps, but its checks of a resolution
		if e.State != record.MergeChecking {
			p.above("  " + describeEvent(e))
		}
	case record.EvAgentStatus:
		if c := p.active[e.Cue]; c != nil {
			d, _ := e.Data.(record.StatusData)
			c.agent(e.Agent).report = statusText(e.State, d.Progress, "")
		}
	case record.EvUserMessage:
		if d, _ := e.Data.(record.UserMessageData); escalationSeverity(d) != "" {
			p.above(p.paint("31", "  ! ") + describeEvent(e))
			break
		}
		p.above(p.paint("36", "  ✉ ") + describeEvent(e))
	case record.EvExhausted:
		p.above(p.paint("31", "  ! ") + describeEvent(e))
	case record.EvQuestion:
		// The person's questions are prompted (or summarised); undecodable
		// data (the zero value) is shown.
		if d, _ := e.Data.(record.QuestionData); d.To != "person" {
			p.above("  " + describeEvent(e))
		}
	}
}

// agent is the cue's agent id, added when it is new (a fallback).
func (c *liveCue) agent(id string) *liveAgent {
	for _, a := range c.agents {
		if a.id == id {
			return a
		}
	}
	a := &liveAgent{id: id}
	c.agents = append(c.agents, a)
	return a
}

func (p *liveProgress) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.above(p.paint("35", "  ? ") + line)
}

func (p *liveProgress) finalLine(c *liveCue, e record.Event) string {
	switch record.CueState(e.State) {
	case record.CueCompleted:
		return fmt.Sprintf("%s %s completed in %s", p.paint("32", "✓"), e.Cue, shortDuration(e.At.Sub(c.start)))
	case record.CueFailed:
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

// above prints permanent lines above the block, each cut to the width.
func (p *liveProgress) above(lines ...string) {
	cols, _ := p.size()
	p.clear()
	for _, l := range lines {
		fmt.Fprint(p.w, truncate(l, cols)+"\n")
	}
	p.redraw()
}

// printAbove prints a line of an agent's output (--stream) above the block,
// wrapped to the terminal's width under its "CUE agent |" prefix (all of an
// agent's words are shown, unlike the block's own lines, which are cut); an
// open prompt stays where it is, in the block.
func (p *liveProgress) printAbove(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cols, _ := p.size()
	p.above(wrapStreamLine(line, cols)...)
}

// wrapStreamLine wraps a streamed line ("CUE agent | text", the prefix
// perhaps coloured) to cols, the text's continuation lines indented under
// its start; a terminal too narrow for that wraps the whole line.
func wrapStreamLine(line string, cols int) []string {
	sep := strings.Index(line, " |")
	if cols <= 0 || displayWidth(line) <= cols || sep < 0 {
		return wrap(line, cols)
	}
	head := line[:sep+2]
	if rest := line[sep+2:]; strings.HasPrefix(rest, "\x1b[0m") {
		head += "\x1b[0m"
	}
	text := strings.TrimPrefix(line[len(head):], " ")
	indent := displayWidth(head) + 1
	if cols-indent < 16 {
		return wrap(line, cols)
	}
	lines := wrap(text, cols-indent)
	for i := range lines {
		if i == 0 {
			lines[i] = head + " " + lines[i]
		} else {
			lines[i] = strings.Repeat(" ", indent) + lines[i]
		}
	}
	return lines
}

// clear erases the block and leaves the cursor where it started.
func (p *liveProgress) clear() {
	if p.drawn == 0 {
		return
	}
	fmt.Fprint(p.w, "\r")
	if p.cursor > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA", p.cursor)
	}
	fmt.Fprint(p.w, "\x1b[J")
	p.drawn, p.cursor = 0, 0
}

// redraw draws the block again: in one write, so that the terminal never
// shows half of it.
func (p *liveProgress) redraw() {
	cols, rows := p.size()
	lines, promptRows := p.block(cols, rows)
	var b strings.Builder
	b.WriteString("\r")
	if p.cursor > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.cursor)
	}
	for i, l := range lines {
		b.WriteString("\x1b[2K")
		b.WriteString(truncate(l, cols))
		if i < len(lines)-1 || promptRows == 0 {
			b.WriteString("\n")
		}
	}
	b.WriteString("\x1b[J")
	p.drawn = len(lines)
	p.cursor = len(lines)
	if promptRows > 0 {
		p.cursor = len(lines) - 1 // on the answer line, after the answer
	}
	fmt.Fprint(p.w, b.String())
}

// block is the lines of the block for a terminal of cols x rows (0:
// unknown), and how many of them are the prompt's.
func (p *liveProgress) block(cols, rows int) ([]string, int) {
	lines := p.header(cols)
	var prompt []string
	if p.prompt != nil {
		answer := printable(string(p.prompt.editor.text))
		if p.cooked {
			answer = "" // the terminal shows what is typed
		}
		prompt = p.prompt.lines(answer, cols)
	}
	// The block must fit on the screen (the cursor cannot go above it):
	// agents that do not fit are counted on one line.
	room := 1 << 30
	if rows > 0 {
		room = max(rows-1-len(lines)-len(prompt), 1)
	}
	agentLines := p.agentLines()
	if len(agentLines) > room {
		n := len(agentLines) - room + 1
		agentLines = append(agentLines[:room-1], fmt.Sprintf("  … and %d more", n))
	}
	lines = append(lines, agentLines...)
	if rows > 0 && len(lines)+len(prompt) > rows-1 && len(prompt) > 1 {
		prompt = prompt[len(prompt)-max(rows-1-len(lines), 1):] // the answer line stays
	}
	return append(lines, prompt...), len(prompt)
}

// header is the run, its elapsed time and how many of its cues are done,
// running, waiting and failed (then blocked, skipped, stopped, when any):
// one line, or more on a narrow terminal.
func (p *liveProgress) header(cols int) []string {
	counts := map[record.CueState]int{}
	for _, s := range p.states {
		counts[s]++
	}
	running := counts[record.CueWarning] + counts[record.CueStandby] + counts[record.CueGo]
	run := fmt.Sprintf("run %s %5s", p.runID, shortDuration(time.Since(p.started)))
	n := fmt.Sprintf("%d done, %d running, %d waiting, %d failed", counts[record.CueCompleted], running,
		counts[record.CuePending]+counts[record.CueInterrupted], counts[record.CueFailed])
	for _, s := range []record.CueState{record.CueBlocked, record.CueSkipped, record.CueStopped} {
		if counts[s] > 0 {
			n += fmt.Sprintf(", %d %s", counts[s], s)
		}
	}
	if cols > 0 && displayWidth(run)+2+displayWidth(n) > cols {
		lines := []string{p.paint("1", run)}
		for _, l := range wrap(n, cols-2) {
			lines = append(lines, p.paint("1", "  "+l))
		}
		return lines
	}
	return []string{p.paint("1", run+"  "+n)}
}

// spinner is drawn before each running agent.
var spinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// agentLines is one line per agent of each active cue, the oldest cue
// first: spinner, time in the phase, phase, cue, agent#attempt.
func (p *liveProgress) agentLines() []string {
	cues := make([]*liveCue, 0, len(p.active))
	idWidth := 0
	for _, c := range p.active {
		cues = append(cues, c)
		idWidth = min(max(idWidth, displayWidth(c.id)), 24)
	}
	sort.Slice(cues, func(i, j int) bool {
		return cues[i].start.Before(cues[j].start) || cues[i].start.Equal(cues[j].start) && cues[i].id < cues[j].id
	})
	spin := spinner[time.Now().UnixMilli()/100%int64(len(spinner))]
	var lines []string
	for _, c := range cues {
		agents := c.agents
		if len(agents) == 0 {
			agents = []*liveAgent{{}}
		}
		for i, a := range agents {
			id, phase, mark := c.id, c.phase, spin
			if i > 0 {
				id, phase = "", ""
			}
			who := a.id
			if a.attempt > 0 {
				who = fmt.Sprintf("%s#%d", a.id, a.attempt)
			}
			if a.state != "" {
				who += " " + a.state
				mark = ' '
			} else if a.report != "" {
				who += " [" + a.report + "]"
			}
			lines = append(lines, fmt.Sprintf("  %c %5s %-7s %s%s %s", mark, shortDuration(time.Since(c.start)), phase,
				id, strings.Repeat(" ", max(idWidth-displayWidth(id), 0)), who))
		}
	}
	return lines
}

func (p *liveProgress) stop() {
	close(p.quit)
	<-p.done
	p.noResize()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	if p.restore != nil {
		p.restore()
	}
}
