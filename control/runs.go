package control

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// RunsRequest asks for the most recent runs.
type RunsRequest struct {
	Limit int  // how many, newest first (0: every one)
	All   bool // every run, whatever Limit says
}

// RunList is the most recent runs, newest first, and how many there are.
type RunList struct {
	Runs  []RunSummary
	Total int
}

// RunSummary is one run in orch status --output json (the run list).
type RunSummary struct {
	ID        string  `json:"id"`
	Cuelist   string  `json:"cuelist"`
	State     string  `json:"state"`
	Reason    string  `json:"reason,omitempty"`
	StartedAt *string `json:"started_at"`
	EndedAt   *string `json:"ended_at"`
	Cues      int     `json:"cues"` // the plan's cues (not child tasks)
	Completed int     `json:"completed"`
	Failed    int     `json:"failed"`
	Questions int     `json:"open_questions"`
	Credits   float64 `json:"credits"`
	Used              // what the agents reported they used: the page's cost column

	// Summary is the store's, for renderers (times as times).
	Summary store.RunSummary `json:"-"`
}

// Runs lists the most recent runs, newest first.
func (c *Controller) Runs(ctx context.Context, req RunsRequest) (*RunList, error) {
	db, err := c.Reader()
	if err != nil {
		return nil, err
	}
	limit := req.Limit
	if req.All {
		limit = 0
	}
	runs, total, err := db.Runs(ctx, limit)
	if err != nil {
		return nil, c.damaged(err)
	}
	out := &RunList{Runs: make([]RunSummary, 0, len(runs)), Total: total}
	for _, r := range runs {
		out.Runs = append(out.Runs, RunSummary{ID: r.ID, Cuelist: r.Cuelist, State: string(r.State), Reason: r.Reason,
			StartedAt: timeJSON(r.StartedAt), EndedAt: timeJSON(r.EndedAt), Cues: r.Cues, Completed: r.Completed, Failed: r.Failed,
			Questions: r.OpenQuestions, Credits: r.Used.Credits, Used: usedOf(r.Used), Summary: r})
	}
	return out, nil
}

// Run is the store's detail of the run ref names: its cues, attempts,
// questions, escalations (what completions and renderers read).
func (c *Controller) Run(ctx context.Context, ref string) (*store.RunDetail, error) {
	var r *store.RunDetail
	err := c.reading(ctx, ref, func(db *store.DB, id string) (err error) {
		r, err = db.Run(ctx, id)
		return err
	})
	return r, err
}

// RunState is the state of run id (a cheap read, for followers).
func (c *Controller) RunState(ctx context.Context, id string) (record.RunState, error) {
	db, err := c.Reader()
	if err != nil {
		return "", err
	}
	st, err := db.RunState(ctx, id)
	return st, c.damaged(err)
}

// InboxItem is one item of the inbox (GET /api/inbox): what a person is
// waiting on.
type InboxItem struct {
	Run        string  `json:"run"`
	Kind       string  `json:"kind"` // "question", "go" or "escalation"
	ID         string  `json:"id"`   // the question's id (q1), the cue's, or the escalation's (e42)
	Cue        string  `json:"cue"`  // the asker's task, or the cue waiting for GO
	Text       string  `json:"text"`
	Complexity string  `json:"complexity,omitempty"` // a question's: quick or deep
	Severity   string  `json:"severity,omitempty"`   // an escalation's: high or critical
	Asker      string  `json:"asker,omitempty"`      // the agent that asked (or escalated)
	At         *string `json:"at"`
}

// Inbox is every run's open questions to the person, cues waiting for GO
// and high or critical escalations not yet acknowledged, newest first:
// Answer, Go and Ack act on them.
func (c *Controller) Inbox(ctx context.Context) ([]InboxItem, error) {
	db, err := c.Reader()
	if err != nil {
		return nil, err
	}
	items, err := db.Inbox(ctx)
	if err != nil {
		return nil, c.damaged(err)
	}
	out := make([]InboxItem, 0, len(items))
	for _, it := range items {
		out = append(out, InboxItem{Run: it.Run, Kind: it.Kind, ID: it.ID, Cue: it.Cue, Text: it.Text,
			Complexity: it.Complexity, Severity: it.Severity, Asker: it.Asker, At: timeJSON(it.At)})
	}
	return out, nil
}

// WriteJSON writes v as the commands print JSON: indented, one value.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// timeJSON is a time as the JSON results give it: RFC 3339 in UTC, or null.
func timeJSON(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// OneLine puts s on one line of at most n characters (runes): how a
// message quotes what an agent or a person wrote.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		return string([]rune(s)[:n-3]) + "..."
	}
	return s
}
