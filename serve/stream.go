package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/orch-cli/orch/control"
)

// streamPoll is how often a stream looks for events other processes wrote.
const streamPoll = 150 * time.Millisecond

// stream sends the run's events as Server-Sent Events, each with its seq as
// id, from after= or the Last-Event-ID a reconnecting browser sends, so a
// client that reconnects misses nothing and gets nothing twice. It polls
// the database, so it sees what any process writes; it ends when the
// client goes or the server shuts down. (The page follows a run through
// GET /api/stream?run=ID, which carries the same events: one connection a
// tab. This one is for scripts.)
func (s *Server) stream(w http.ResponseWriter, r *http.Request, id string) {
	f, ok := s.follow(w, r, id)
	if !ok {
		return
	}
	flusher, ok := startSSE(w, ": orch events of run "+id)
	if !ok {
		return
	}
	ctx := r.Context()
	for {
		more, err := f.send(ctx, w)
		flusher.Flush()
		if err != nil {
			return
		}
		if more {
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

// follower sends a run's events, a page at a time, each after the last sent.
type follower struct {
	s     *Server
	run   string
	after int64
}

// follow reads where a stream of run's events starts: after= or, from a
// browser reconnecting, Last-Event-ID (the seq of the last event it got).
// A bad value is answered here (400) and ok is false.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, run string) (*follower, bool) {
	after, ok := number(w, r, "after")
	if !ok {
		return nil, false
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("Last-Event-ID %q: want a sequence number", last))
			return nil, false
		}
		after = n
	}
	return &follower{s: s, run: run, after: after}, true
}

// send writes the next page of events ("event: event", id: its seq); more
// says a full page went, so more may be waiting. An error ends the stream:
// the client has gone, or the database failed (said as "event: error").
func (f *follower) send(ctx context.Context, w http.ResponseWriter) (more bool, err error) {
	events, err := f.s.ctl.Events(ctx, control.EventsRequest{Run: f.run, After: f.after})
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(w, "event: error\ndata: %s\n\n", jsonString(err.Error()))
		}
		return false, err
	}
	for _, e := range events {
		data, err := json.Marshal(e)
		if err != nil {
			return false, err
		}
		if _, err := fmt.Fprintf(w, "id: %d\nevent: event\ndata: %s\n\n", e.Seq, data); err != nil {
			return false, err // the client has gone
		}
		f.after = e.Seq
	}
	return len(events) == control.PageSize, nil
}

// startSSE answers 200 as an event stream, with comment as its first line.
func startSSE(w http.ResponseWriter, comment string) (http.Flusher, bool) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "this connection cannot stream")
		return nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, comment+"\n\n")
	flusher.Flush()
	return flusher, true
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
