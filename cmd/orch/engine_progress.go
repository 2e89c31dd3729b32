package main

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	"github.com/orch-cli/orch/control"
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
	s.read(s.prog.event)
}

// read passes the events recorded since the last read to each, once the
// database is there (orch-temporal makes it).
func (s *storeProgress) read(each func(record.Event)) {
	if s.db == nil {
		if _, err := os.Stat(s.dbFile); err != nil {
			return
		}
		db, err := store.Open(s.dbFile, store.Options{})
		if err != nil {
			return
		}
		s.db, s.prog.tail = db, storeTail(db, s.tailLines)
	}
	for {
		evs, err := s.db.Events(context.Background(), s.id, s.after, 500)
		if err != nil || len(evs) == 0 {
			return
		}
		for _, e := range evs {
			each(e)
			s.after = e.Seq
		}
	}
}

// followStoreProgress prints run id's events from dbFile as they are
// recorded, until stop is called; stop prints what is left. before wraps
// orch-temporal's stderr: the events recorded before a line it prints (its
// end line) are printed first. fromNow skips the events recorded already
// (orch resume: only what follows).
func followStoreProgress(w io.Writer, dbFile, id string, tailLines int, fromNow bool) (before func(io.Writer) io.Writer, stop func()) {
	s := &storeProgress{dbFile: dbFile, id: id, tailLines: tailLines, prog: &plainProgress{w: w}}
	if fromNow {
		s.read(func(record.Event) {})
	}
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

// temporalResumeProgress prints, while orch resume follows a run on
// Temporal (through orch-temporal resume), the plain lines of the events
// it mirrors from now on; for a local run, or output that is not plain
// text, it does nothing. stop ends it.
func temporalResumeProgress(ctx context.Context, ctl *control.Controller, opts *resumeOptions) (stop func()) {
	info, err := ctl.Engine(ctx, opts.run)
	if err != nil || info.Temporal == nil || ctl.HandOverIO == nil || opts.show.output == "json" {
		return func() {}
	}
	before, stopProgress := followStoreProgress(opts.io.out, ctl.Path(), info.Run, defaultTailLines, true)
	saved := ctl.HandOverIO
	wrapped := *saved
	wrapped.Err = before(saved.Err)
	ctl.HandOverIO = &wrapped
	return func() {
		stopProgress()
		ctl.HandOverIO = saved
	}
}
