package control

import (
	"context"
	"slices"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// What a Wait waits for.
const (
	WaitQuestion = "question" // a question to the person is open
	WaitGo       = "go"       // a cue waits for GO
	WaitEnd      = "end"      // the run no longer moves by itself: over, paused or interrupted
)

// WaitRequest waits until a run needs a person, or stops moving.
type WaitRequest struct {
	Run string
	// For is what to wait for (WaitQuestion, WaitGo, WaitEnd); none: any.
	For []string
	// Poll is how often the database is read (0: every 200 ms).
	Poll time.Duration
}

// WaitResult is what a Wait found: why it returned (one of For), the
// run's state, and what in the inbox is the run's.
type WaitResult struct {
	Run   string      `json:"run"`
	Why   string      `json:"why"`
	State string      `json:"state"`
	Inbox []InboxItem `json:"inbox"`
}

// Wait reads the run until what req asks for is there, or ctx ends (its
// error). It reads the run's state and the inbox only, never the cues, so
// it costs little on a big run.
func (c *Controller) Wait(ctx context.Context, req WaitRequest) (*WaitResult, error) {
	id, err := c.Resolve(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	wants := func(what string) bool { return len(req.For) == 0 || slices.Contains(req.For, what) }
	for _, w := range req.For {
		if w != WaitQuestion && w != WaitGo && w != WaitEnd {
			return nil, invalidf("wait for %q: want %s, %s or %s", w, WaitQuestion, WaitGo, WaitEnd)
		}
	}
	poll := req.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	for {
		state, err := c.RunState(ctx, id)
		if err != nil {
			return nil, err
		}
		all, err := c.Inbox(ctx)
		if err != nil {
			return nil, err
		}
		out := &WaitResult{Run: id, State: string(state), Inbox: []InboxItem{}}
		for _, it := range all {
			if it.Run == id {
				out.Inbox = append(out.Inbox, it)
			}
		}
		kinds := map[string]bool{}
		for _, it := range out.Inbox {
			kinds[it.Kind] = true
		}
		switch {
		case kinds["question"] && wants(WaitQuestion):
			out.Why = WaitQuestion
		case kinds["go"] && wants(WaitGo):
			out.Why = WaitGo
		case (state.Ended() || state == record.RunPaused || state == record.RunInterrupted) && wants(WaitEnd):
			out.Why = WaitEnd
		}
		if out.Why != "" {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}
