package serve

import (
	"context"
	"encoding/json"
	"net/http"
)

// inbox is every run's open questions to the person, cues waiting for GO
// and high or critical escalations not yet acknowledged, newest first:
// POST answer, go and ack act on them.
func (s *Server) inbox(w http.ResponseWriter, r *http.Request) {
	body, err := s.inboxJSON(r.Context())
	reply(w, body, err)
}

func (s *Server) inboxJSON(ctx context.Context) ([]byte, error) {
	items, err := s.ctl.Inbox(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(items)
}
