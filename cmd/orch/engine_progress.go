package main

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// While orch run --engine temporal follows its run, orch-temporal mirrors
// the workflow's events into the store; orch reads them back from there and
// prints the same plain lines as a local run (one timestamped line per
// event, the last lines of a failed attempt under it).

// progressPoll is how often the store is read for the run's new events.
const progressPoll = 200 * time.Millisecond

// storeProgress prints a run's events from its store as they are recorded.
type storeProgress struct {
	mu        sync.Mutex
	w         io.Writer
	dbFile    string
	id        string
	tailLines int
	db        *store.DB
	prog      *plainProgress
	after     int64
}

// catchUp prints the events recorded since the last it printed.
func (s *storeProgress) catchUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		// orch-temporal makes the database: open it once it is there.
		if _, err := os.Stat(s.dbFile); err != nil {
			return
		}
		db, err := store.Open(s.dbFile, store.Options{})
		if err != nil {
			return
		}
		s.db, s.prog = db, &plainProgress{w: s.w, tail: storeTail(db, s.tailLines)}
	}
	for {
		evs, err := s.db.Events(context.Background(), s.id, s.after, 500)
		if err != nil || len(evs) == 0 {
			return
		}
		for _, e := range evs {
			s.prog.event(e)
			s.after = e.Seq
		}
	}
}

// followStoreProgress prints run id's events from dbFile as they are
// recorded, until stop is called; stop prints what is left. before wraps
// orch-temporal's stderr: the events recorded before a line it prints (its
// end line) are printed first.
func followStoreProgress(w io.Writer, dbFile, id string, tailLines int) (before func(io.Writer) io.Writer, stop func()) {
	s := &storeProgress{w: w, dbFile: dbFile, id: id, tailLines: tailLines}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			s.catchUp()
			select {
			case <-ctx.Done():
				return
			case <-time.After(progressPoll):
			}
		}
	}()
	before = func(next io.Writer) io.Writer { return catchUpFirst{s: s, w: next} }
	return before, func() {
		cancel()
		<-done
		s.catchUp()
		if s.db != nil {
			s.db.Close()
		}
	}
}

// catchUpFirst prints the run's recorded events before what is written.
type catchUpFirst struct {
	s *storeProgress
	w io.Writer
}

func (c catchUpFirst) Write(p []byte) (int, error) {
	c.s.catchUp()
	return c.w.Write(p)
}

// progressRunID is the id orch gives a run it starts on Temporal, so that
// it can read the run's events from the store while orch-temporal records
// them.
var progressRunID = record.NewRunID
