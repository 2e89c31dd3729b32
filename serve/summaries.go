package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// summaryRefresh is how often the run list is read again even though
// nothing was written: a run whose owner died turns interrupted with no
// write at all (its lease runs out).
const summaryRefresh = 2 * time.Second

// summaries is the run list and the inbox as GET /api/runs and /api/inbox
// give them, kept up to date by one poller for every GET /api/stream client:
// whatever the number of clients, the database is asked once a poll whether
// anything was committed, and the lists are read again only then.
type summaries struct {
	once sync.Once

	mu      sync.Mutex
	runs    []byte
	inbox   []byte
	err     error
	changed chan struct{} // closed (and replaced) when anything above changes
}

// current returns the lists (nil before the first read) and a channel
// closed at the next change.
func (h *summaries) current() (runs, inbox []byte, changed <-chan struct{}, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs, h.inbox, h.changed, h.err
}

func (h *summaries) set(runs, inbox []byte, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil && bytes.Equal(runs, h.runs) && bytes.Equal(inbox, h.inbox) && h.err == nil {
		return
	}
	if err == nil {
		h.runs, h.inbox = runs, inbox
	}
	h.err = err
	close(h.changed)
	h.changed = make(chan struct{})
}

// watchSummaries starts the poller once; it ends when the server shuts down.
func (s *Server) watchSummaries() {
	s.sums.once.Do(func() {
		s.sums.mu.Lock()
		s.sums.changed = make(chan struct{})
		s.sums.mu.Unlock()
		go s.pollSummaries()
	})
}

func (s *Server) pollSummaries() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-s.done; cancel() }()
	watch, err := s.ctl.Watch(ctx)
	if err != nil {
		s.sums.set(nil, nil, err)
	} else {
		defer watch.Close()
	}
	var read time.Time
	var took time.Duration
	pending := false // a change seen and not read yet
	tick := time.NewTicker(streamPoll)
	defer tick.Stop()
	for {
		changed := true // without a watch: read every poll
		if watch != nil {
			if changed, err = watch.Changed(ctx); err != nil {
				changed = true
			}
		}
		pending = pending || changed
		// While runs are being written, every poll sees a change: reading
		// the lists again is spaced to four times what it takes, so that on
		// a large database the poller uses at most a fifth of a core.
		since := time.Since(read)
		if pending && since >= 4*took || since >= summaryRefresh {
			read, pending = time.Now(), false
			runs, err := s.runsJSON(ctx)
			var inbox []byte
			if err == nil {
				inbox, err = s.inboxJSON(ctx)
			}
			if ctx.Err() != nil {
				return
			}
			took = time.Since(read)
			s.sums.set(compactJSON(runs), inbox, err)
		}
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
	}
}

// streamRuns sends the run list as Server-Sent Events: "runs" (the list of
// GET /api/runs) at once and whenever a run's summary changes, "inbox" (the
// list of GET /api/inbox) at once and whenever it changes. A client that
// reconnects starts with both lists, so it misses nothing; they carry no
// id, so they leave the browser's Last-Event-ID alone.
//
// With ?run=ID it also follows that run's events, as
// GET /api/runs/ID/stream does ("event: event" with the seq as id, from
// after= or Last-Event-ID): a page needs one connection, whatever it shows
// (browsers allow six to a host, across all their tabs). It ends when the
// client goes or the server shuts down.
func (s *Server) streamRuns(w http.ResponseWriter, r *http.Request) {
	var f *follower
	if ref := r.URL.Query().Get("run"); ref != "" {
		id, ok := s.resolve(w, r, ref)
		if !ok {
			return
		}
		if f, ok = s.follow(w, r, id); !ok {
			return
		}
	}
	s.watchSummaries()
	comment := ": orch runs and inbox"
	if f != nil {
		comment += ", and the events of run " + f.run
	}
	flusher, ok := startSSE(w, comment)
	if !ok {
		return
	}
	var sentRuns, sentInbox []byte
	var sentErr error
	ctx := r.Context()
	for {
		runs, inbox, changed, err := s.sums.current()
		if err != nil && err != sentErr && ctx.Err() == nil {
			fmt.Fprintf(w, "event: error\ndata: %s\n\n", jsonString(err.Error()))
		}
		sentErr = err
		if runs != nil && !bytes.Equal(runs, sentRuns) {
			if _, err := fmt.Fprintf(w, "event: runs\ndata: %s\n\n", runs); err != nil {
				return // the client has gone
			}
			sentRuns = runs
		}
		if inbox != nil && !bytes.Equal(inbox, sentInbox) {
			if _, err := fmt.Fprintf(w, "event: inbox\ndata: %s\n\n", inbox); err != nil {
				return
			}
			sentInbox = inbox
		}
		var poll <-chan time.Time // the run's events are polled; the lists are watched
		if f != nil {
			more, err := f.send(ctx, w)
			if err != nil {
				flusher.Flush()
				return
			}
			if more {
				flusher.Flush()
				continue
			}
			poll = time.After(streamPoll)
		}
		flusher.Flush()
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case <-changed:
		case <-poll:
		}
	}
}

// compactJSON puts a JSON value on one line (an SSE data line).
func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}
