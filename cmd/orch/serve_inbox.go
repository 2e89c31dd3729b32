package main

import (
	"context"
	"encoding/json"
	"net/http"
)

// inboxJSON is one item of GET /api/inbox: what a person is waiting on.
type inboxJSON struct {
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

// inbox is every run's open questions to the person, cues waiting for GO
// and high or critical escalations not yet acknowledged, newest first:
// POST answer, go and ack act on them.
func (s *server) inbox(w http.ResponseWriter, r *http.Request) {
	body, err := s.inboxJSON(r.Context())
	reply(w, body, err)
}

func (s *server) inboxJSON(ctx context.Context) ([]byte, error) {
	items, err := s.db.Inbox(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]inboxJSON, 0, len(items))
	for _, it := range items {
		out = append(out, inboxJSON{Run: it.Run, Kind: it.Kind, ID: it.ID, Cue: it.Cue, Text: it.Text,
			Complexity: it.Complexity, Severity: it.Severity, Asker: it.Asker, At: timeJSON(it.At)})
	}
	return json.Marshal(out)
}
