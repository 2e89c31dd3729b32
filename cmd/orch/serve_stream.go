package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// streamPoll is how often a stream looks for events other processes wrote.
const streamPoll = 150 * time.Millisecond

// stream sends the run's events as Server-Sent Events, each with its seq as
// id, from after= or the Last-Event-ID a reconnecting browser sends, so a
// client that reconnects misses nothing and gets nothing twice. It polls
// the database, so it sees what any process writes; it ends when the
// client goes or the server shuts down.
func (s *server) stream(w http.ResponseWriter, r *http.Request, id string) {
	after, ok := number(w, r, "after")
	if !ok {
		return
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("Last-Event-ID %q: want a sequence number", last))
			return
		}
		after = n
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": orch events of run "+id+"\n\n")
	flusher.Flush()
	ctx := r.Context()
	for {
		events, err := s.db.Events(ctx, id, after, pageSize)
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(w, "event: error\ndata: %s\n\n", jsonString(err.Error()))
				flusher.Flush()
			}
			return
		}
		for _, e := range events {
			data, err := json.Marshal(e)
			if err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, "event", data); err != nil {
				return // the client has gone
			}
			after = e.Seq
		}
		flusher.Flush()
		if len(events) == pageSize {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case <-time.After(streamPoll):
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
