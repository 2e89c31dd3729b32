package control

import (
	"context"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// PageSize is how many events or log lines a page holds at most (the
// commands read, and serve sends, a page at a time).
const PageSize = 1000

// EventsRequest asks for a page of a run's event log.
type EventsRequest struct {
	Run   string
	After int64 // only events after this sequence number
	Limit int   // at most this many (0: PageSize)
}

// Events reads a page of a run's event log, in sequence order.
func (c *Controller) Events(ctx context.Context, req EventsRequest) ([]record.Event, error) {
	var out []record.Event
	err := c.reading(ctx, req.Run, func(db *store.DB, id string) (err error) {
		c.catchUp(ctx, db, id)
		out, err = db.Events(ctx, id, req.After, pageLimit(req.Limit))
		return err
	})
	return out, err
}

func pageLimit(n int) int {
	if n <= 0 {
		return PageSize
	}
	return n
}

// LogsRequest asks for a run's output lines, of every cue or of Cue.
type LogsRequest struct {
	Run   string
	Cue   string // "": every cue's (child tasks included)
	After int64  // only lines after this seq
	Limit int    // at most this many (0: PageSize)
	Tail  int    // LogsTail: the last Tail lines of each cue
}

// LogLine is one line an agent wrote, as orch logs --output json prints it.
type LogLine struct {
	Seq     int64  `json:"seq"` // its place in the database, increasing
	Time    string `json:"time"`
	Cue     string `json:"cue"`
	Agent   string `json:"agent"`
	Attempt int    `json:"attempt"`
	Stream  string `json:"stream"`
	Line    string `json:"line"`

	At time.Time `json:"-"` // Time, as a time
}

func logLines(recs []store.LogRecord) []LogLine {
	out := make([]LogLine, 0, len(recs))
	for _, l := range recs {
		out = append(out, LogLine{Seq: l.ID, Time: l.At.UTC().Format(time.RFC3339Nano), Cue: l.Cue, Agent: l.Agent,
			Attempt: l.Attempt, Stream: l.Stream, Line: l.Text, At: l.At})
	}
	return out
}

// Logs reads a page of a run's output lines, in the order they came.
func (c *Controller) Logs(ctx context.Context, req LogsRequest) ([]LogLine, error) {
	var out []LogLine
	err := c.reading(ctx, req.Run, func(db *store.DB, id string) error {
		recs, err := db.Logs(ctx, id, req.Cue, req.After, pageLimit(req.Limit))
		out = logLines(recs)
		return err
	})
	return out, err
}

// LogsTail reads the last req.Tail lines of each cue (of req.Cue), and the
// seq after which the lines still to come follow.
func (c *Controller) LogsTail(ctx context.Context, req LogsRequest) ([]LogLine, int64, error) {
	var out []LogLine
	var last int64
	err := c.reading(ctx, req.Run, func(db *store.DB, id string) error {
		recs, l, err := db.LogsTail(ctx, id, req.Cue, req.Tail)
		out, last = logLines(recs), l
		return err
	})
	return out, last, err
}

// Follow calls read (which reads the next page and reports whether it was
// full) until nothing is left. With follow it goes on every 200 ms until
// run id ends or pauses — then reads once more, for what was written
// meanwhile — or ctx ends, which is how a follower is left: not an error.
// Polling reads the run's state alone, not its cues.
func (c *Controller) Follow(ctx context.Context, id string, follow bool, read func() (full bool, err error)) error {
	last := !follow
	for {
		full, err := read()
		if err != nil {
			return ifNotLeft(ctx, err)
		}
		if full {
			continue
		}
		if last {
			return nil
		}
		state, err := c.RunState(ctx, id)
		if err != nil {
			return ifNotLeft(ctx, err)
		}
		if state.Ended() || state == record.RunPaused {
			last = true
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ifNotLeft is err, unless ctx ended: that is how a follower is left.
func ifNotLeft(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
