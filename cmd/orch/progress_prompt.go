package main

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
)

// The live display's prompts: a manual cue's GO and an agent's question
// for the person, drawn at the bottom of the block with the answer being
// typed (the terminal in cbreak mode: the display echoes it itself).

func (p *liveProgress) ask(ctx context.Context, question string) bool {
	line, ok := p.ask1(ctx, nil, question+" [y/N] ")
	answer := strings.ToLower(strings.TrimSpace(line))
	return ok && (answer == "y" || answer == "yes")
}

func (p *liveProgress) question(ctx context.Context, q runner.QuestionPrompt) (string, bool) {
	text := []string{fmt.Sprintf("%s question %s from %s (%s)", p.paint("35", "["+q.Complexity+"]"), q.ID, q.Agent, q.Cue)}
	for _, l := range strings.Split(strings.TrimRight(q.Question, "\n"), "\n") {
		text = append(text, "  "+printable(l))
	}
	for {
		line, ok := p.ask1(ctx, text, "  answer (Enter alone leaves it for orch answer): ")
		line = strings.TrimSpace(line)
		if !ok || line == "" {
			return line, false
		}
		// A question with options takes an answer naming one: asked again.
		_, err := record.PickOption(q.Options, line)
		if err == nil {
			return line, true
		}
		var lines []string
		for _, l := range strings.Split(err.Error(), "\n") {
			lines = append(lines, "  "+printable(l))
		}
		p.mu.Lock()
		p.above(lines...)
		p.mu.Unlock()
	}
}

// ask1 shows a prompt in the block and returns the line typed; ok is false
// when ctx ends first (the run is stopping, Ctrl-C, or the question was
// answered elsewhere) or the input has ended.
func (p *liveProgress) ask1(ctx context.Context, text []string, label string) (string, bool) {
	p.promptMu.Lock()
	defer p.promptMu.Unlock()
	if ctx.Err() != nil || p.keys == nil {
		return "", false
	}
	pr := &livePrompt{text: text, label: label}
	p.mu.Lock()
	done := false
	if p.cooked { // lines typed ahead (line mode) answer the next prompts
		done = len(p.rest) > 0 && pr.editor.feed(p.rest)
	} else {
		p.keys.drain()
	}
	p.rest = nil
	p.prompt = pr
	p.redraw()
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.prompt, p.rest = nil, pr.editor.rest
		// The prompt and its answer stay on the screen, above the block.
		cols, _ := p.size()
		answer := printable(string(pr.editor.text))
		if !pr.editor.done {
			answer = "(no answer here)"
		}
		p.above(pr.lines(answer, cols)...)
	}()
	for !done {
		select {
		case b, ok := <-p.keys.chunks:
			if !ok {
				return "", false
			}
			p.mu.Lock()
			done = pr.editor.feed(b)
			p.redraw()
			p.mu.Unlock()
		case <-ctx.Done():
			return "", false
		}
	}
	return string(pr.editor.text), !pr.editor.eof
}

// lines are the prompt's lines on a terminal cols wide (0: unknown): its
// text, wrapped, then the label and the answer, the end of a long answer
// showing, where it is typed. A label too wide to leave room for the
// answer goes on its own lines, the answer after "> " below it.
func (pr *livePrompt) lines(answer string, cols int) []string {
	var lines []string
	for _, t := range pr.text {
		lines = append(lines, wrapIndented(t, cols)...)
	}
	label := pr.label
	if cols > 0 && displayWidth(label)+10 > cols {
		lines = append(lines, wrapIndented(strings.TrimRight(label, " "), cols)...)
		label = "> "
	}
	if cols > 0 {
		for displayWidth(label)+displayWidth(answer) > cols-1 && answer != "" {
			_, size := utf8.DecodeRuneInString(answer)
			answer = answer[size:]
		}
	}
	return append(lines, label+answer)
}
