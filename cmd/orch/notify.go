package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
)

// summaryEvery is how often `notify: summary` shows the open questions.
var summaryEvery = 30 * time.Second // a variable for the tests

// summaryProgress is the cuelist's `notify: summary` (overseer mode): the
// person's questions are not shown one by one as they come, but as one line
// listing the open ones, at most every summaryEvery. Which questions reach
// the person does not change, only how they are shown.
type summaryProgress struct {
	progress
	runID string

	mu    sync.Mutex
	open  map[string]string // id -> "q1 [quick] helper (CUE/1)"
	dirty bool
	last  time.Time
	quit  chan struct{}
	done  chan struct{}
}

func newSummaryProgress(p progress) *summaryProgress {
	s := &summaryProgress{progress: p, open: map[string]string{}, quit: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *summaryProgress) event(e record.Event) {
	switch e.Type {
	case record.EvRunStarted, record.EvRunState:
		s.mu.Lock()
		s.runID = e.RunID
		s.mu.Unlock()
	case record.EvQuestion:
		d, _ := e.Data.(record.QuestionData) // nil or undecodable data: the zero value
		if d.To == "person" {
			s.mu.Lock()
			s.open[d.ID] = fmt.Sprintf("%s [%s] %s (%s)", d.ID, d.Complexity, e.Agent, e.Cue)
			s.dirty = true
			s.mu.Unlock()
			return
		}
	case record.EvQuestionClosed:
		d, _ := e.Data.(record.AnswerData) // nil or undecodable data: the zero value
		s.mu.Lock()
		delete(s.open, d.ID)
		s.mu.Unlock()
	}
	s.progress.event(e)
}

func (s *summaryProgress) loop() {
	defer close(s.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			if line := s.summary(false); line != "" {
				s.note(line)
			}
		}
	}
}

// summary is the line listing the open questions, when one is due (or now).
func (s *summaryProgress) summary(now bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.open) == 0 || !now && (!s.dirty || time.Since(s.last) < summaryEvery) {
		return ""
	}
	s.dirty, s.last = false, time.Now()
	items := make([]string, 0, len(s.open))
	for _, q := range s.open {
		items = append(items, q)
	}
	sort.Strings(items)
	return fmt.Sprintf("%d open question(s): %s — see them with orch status %s, answer with orch answer %s QID TEXT",
		len(items), strings.Join(items, ", "), s.runID, s.runID)
}

func (s *summaryProgress) question(context.Context, runner.QuestionPrompt) (string, bool) {
	return "", false // summarised, not prompted
}

func (s *summaryProgress) stop() {
	close(s.quit)
	<-s.done
	s.progress.stop()
}
