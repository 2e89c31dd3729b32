package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

func streamPlan(cues map[string][]string) *planner.Plan {
	p := &planner.Plan{}
	for id, agents := range cues {
		p.Order = append(p.Order, &planner.Cue{Cue: &spec.Cue{ID: id, Agents: agents}})
	}
	return p
}

// A terminal slower than the agents never holds them up: add never blocks;
// past the buffer, lines are counted and a note says how many were not
// shown. Every line is either shown or counted.
func TestStreamNeverBlocksAndCountsWhatItDrops(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var shown []string
	print := func(line string) {
		<-release // the terminal is stuck until released
		mu.Lock()
		shown = append(shown, line)
		mu.Unlock()
	}
	s := newStreamPrinter(print, false, streamPlan(map[string][]string{"BUILD": {"make"}}))
	const total = streamBuffer + 1000
	for i := range total {
		s.add(record.LogLine{RunID: "abc", Cue: "BUILD", Agent: "make", Text: fmt.Sprint("line ", i)})
	}
	close(release)
	s.close()
	lines, dropped := 0, 0
	for _, l := range shown {
		var n int
		if _, err := fmt.Sscanf(l, "… %d line(s) not shown", &n); err == nil {
			if !strings.HasSuffix(l, "see orch logs abc") {
				t.Errorf("the note does not say where the lines are: %q", l)
			}
			dropped += n
			continue
		}
		lines++
	}
	if dropped == 0 || lines+dropped != total {
		t.Errorf("shown %d + dropped %d != %d lines added", lines, dropped, total)
	}
}

// Each line carries its cue and agent, padded to one width; on a terminal
// the prefix has its cue's colour, a child task has its cue's, and a line
// that comes after the end is not printed (nor does it panic).
func TestStreamPrefixAndColours(t *testing.T) {
	var mu sync.Mutex
	var shown []string
	print := func(line string) { mu.Lock(); shown = append(shown, line); mu.Unlock() }
	s := newStreamPrinter(print, true, streamPlan(map[string][]string{"A": {"x"}, "LONGER": {"agent"}}))
	s.add(record.LogLine{Cue: "A", Agent: "x", Text: "one\n"})
	s.add(record.LogLine{Cue: "LONGER", Agent: "agent", Text: "two"})
	s.add(record.LogLine{Cue: "A/1", Agent: "helper", Text: "three"})
	s.close()
	s.add(record.LogLine{Cue: "A", Agent: "x", Text: "late"})
	want := []string{
		"\x1b[36mA x          |\x1b[0m one",
		"\x1b[33mLONGER agent |\x1b[0m two",
		"\x1b[36mA/1 helper   |\x1b[0m three",
	}
	if strings.Join(shown, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%q\nwant\n%q", shown, want)
	}
}

// On a terminal, a streamed line is printed above the live block, which is
// redrawn below it: never into it, and never into an open prompt (the
// prompt is part of the block).
func TestStreamPrintsAboveTheLiveBlock(t *testing.T) {
	var out syncBuffer
	cues := []record.CueInfo{{ID: "BUILD", Agents: []string{"make"}}}
	p := newLiveProgress(&out, liveOptions{size: func() (int, int) { return 60, 12 }, cues: cues})
	defer p.stop()
	p.event(record.Event{RunID: "abc", Type: record.EvCueState, Cue: "BUILD", State: string(record.CueGo), At: time.Now()})
	p.mu.Lock()
	p.redraw()
	p.mu.Unlock()
	p.printAbove("BUILD make | compiling")
	p.printAbove("BUILD make | linking")
	term := newVT(60, 12)
	shown := strings.Map(func(r rune) rune { // the spinner, as the screen tests do
		if r >= '⠀' && r <= '⣿' {
			return '*'
		}
		return r
	}, out.String())
	term.write([]byte(strings.ReplaceAll(shown, "\n", "\r\n"))) // as a terminal's ONLCR does
	screen := term.screen()
	lines := strings.Split(screen, "\n")
	first, second, block := -1, -1, -1
	for i, l := range lines {
		switch {
		case strings.Contains(l, "BUILD make | compiling"):
			first = i
		case strings.Contains(l, "BUILD make | linking"):
			second = i
		case strings.Contains(l, "go") && strings.Contains(l, "BUILD") && block < 0:
			block = i
		}
	}
	if first < 0 || second != first+1 || block <= second {
		t.Errorf("the streamed lines are not above the live block, in order:\n%s", screen)
	}
}

// On a narrow terminal a streamed line is wrapped under its prefix, every
// word shown (it was cut at the terminal's width, the rest lost).
func TestStreamWrapsOnNarrowTerminal(t *testing.T) {
	var out syncBuffer
	cues := []record.CueInfo{{ID: "BUILD", Agents: []string{"make"}}}
	p := newLiveProgress(&out, liveOptions{size: func() (int, int) { return 40, 12 }, cues: cues})
	defer p.stop()
	p.printAbove("\x1b[36mBUILD make |\x1b[0m compiling the first package, then the second one, and finally the last")
	term := newVT(40, 12)
	term.write([]byte(strings.ReplaceAll(out.String(), "\n", "\r\n")))
	screen := term.screen()
	want := []string{
		"BUILD make | compiling the first",
		"             package, then the second",
		"             one, and finally the last",
	}
	if !strings.Contains(screen, strings.Join(want, "\n")) {
		t.Errorf("the line is not wrapped under its prefix; want\n%s\nscreen:\n%s", strings.Join(want, "\n"), screen)
	}
}

func TestWrapStreamLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		cols int
		want []string
	}{
		{"A x | short", 40, []string{"A x | short"}},
		{"A x | one two three four", 14, []string{"A x | one two", "three four"}}, // too narrow to indent: the line wraps whole
		{"no separator at all here", 10, []string{"no", "separator", "at all", "here"}},
		{"A x | " + strings.Repeat("w", 30), 26, []string{"A x | " + strings.Repeat("w", 20), "      " + strings.Repeat("w", 10)}},
	} {
		if got := wrapStreamLine(tc.line, tc.cols); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("wrapStreamLine(%q, %d) = %q, want %q", tc.line, tc.cols, got, tc.want)
		}
	}
}
