package runner

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
)

// Watching the blackboard (seed 002 Layer 2, the event bus): an agent in GO
// sends blackboard.watch with keys or a prefix, and from then until its
// attempt ends every write to a watched key by anyone else reaches it as a
// blackboard.changed notice. The hub keeps the watches; writes made through
// this process (agents' blackboard.write, cue exports) are delivered as
// they are stored, each version; writes by another process (orch bb set
// from a shell) are found by the loop when it looks at the store for
// commands, every commandPoll, and each key's latest version is delivered.

// boardWatches are the run's watches, by watching attempt.
type boardWatches struct {
	mu sync.Mutex
	by map[*attemptRun]*boardWatch
}

// boardWatch is one attempt's watch: what it watches, the version of each
// watched key it knows, and the notices waiting for it.
type boardWatch struct {
	keys     map[string]bool
	prefixes []string
	seen     map[string]int64 // the latest version of each key delivered (or known at the watch)
	queue    chan protocols.BlackboardChanged
	done     chan struct{} // closed when the attempt ends
	dropped  bool
}

// watchQueue is how many notices may wait for a watcher's agent to read
// them; beyond that they are dropped, with a note: a writer never waits
// for a watcher.
const watchQueue = 1024

func (w *boardWatch) matches(key string) bool {
	return w.keys[key] || slices.ContainsFunc(w.prefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

// watchBoard serves blackboard.watch: the watch is added to the attempt's
// (started at its first one), and the request and its answer are recorded
// in one commit before the answer goes out.
func (r *run) watchBoard(a *attemptRun, peer driver.Peer, wm *driver.Wire, b protocols.BlackboardWatch) *attempt.Failure {
	if stop, f := r.guardRequest(a, peer, wm); stop {
		return f
	}
	var reply protocols.Message
	switch {
	case len(b.Keys) == 0 && b.Prefix == "":
		reply = protocols.Reply(wm.Msg, protocols.ProtocolError{Reason: "blackboard.watch: give keys, a prefix or both"})
	case slices.Contains(b.Keys, ""):
		reply = protocols.Reply(wm.Msg, protocols.ProtocolError{Reason: "blackboard.watch: a key is empty"})
	default:
		board, err := r.blackboard()
		if err != nil {
			reply = protocols.Reply(wm.Msg, protocols.ProtocolError{Reason: "blackboard.watch failed: " + err.Error()})
			break
		}
		r.watches.add(a, b.Keys, b.Prefix, board)
		reply = protocols.Reply(wm.Msg, protocols.BlackboardWatching{Keys: b.Keys, Prefix: b.Prefix})
	}
	out := driver.Encode(reply)
	if err := r.publish(context0, a.messageEvent("in", wm), a.messageEvent("out", out)); err != nil {
		return notRecorded(wm.Msg, err)
	}
	return peer.Write(reply)
}

// add adds keys and prefix to a's watch; board is the board as it is now,
// whose versions the watcher is taken to know (its task's snapshot, or a
// read it made): only later ones are news.
func (ws *boardWatches) add(a *attemptRun, keys []string, prefix string, board map[string]record.BlackboardEntry) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.by == nil {
		ws.by = map[*attemptRun]*boardWatch{}
	}
	w := ws.by[a]
	if w == nil {
		w = &boardWatch{keys: map[string]bool{}, seen: map[string]int64{},
			queue: make(chan protocols.BlackboardChanged, watchQueue), done: make(chan struct{})}
		ws.by[a] = w
		go w.deliver(a)
	}
	for _, k := range keys {
		w.keys[k] = true
	}
	if prefix != "" && !slices.Contains(w.prefixes, prefix) {
		w.prefixes = append(w.prefixes, prefix)
	}
	for k, e := range board {
		if w.matches(k) && e.Version > w.seen[k] {
			w.seen[k] = e.Version
		}
	}
}

// end removes a's watch when its attempt ends (attempt.run): nothing more
// is delivered to it, and its delivery goroutine ends.
func (ws *boardWatches) end(a *attemptRun) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w := ws.by[a]; w != nil {
		close(w.done)
		delete(ws.by, a)
	}
}

// count is how many attempts watch the board.
func (ws *boardWatches) count() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.by)
}

// changed queues a notice of each newer version of a watched key for every
// watcher but the writer (nil: not an attempt of this run).
func (ws *boardWatches) changed(writer *attemptRun, entries []record.BlackboardEntry) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for a, w := range ws.by {
		for _, e := range entries {
			if !w.matches(e.Key) || e.Version <= w.seen[e.Key] {
				continue
			}
			w.seen[e.Key] = e.Version
			if a == writer {
				continue // its own write: it knows
			}
			var v any
			_ = json.Unmarshal(e.Value, &v)
			select {
			case w.queue <- protocols.BlackboardChanged{CueID: a.node.id, Key: e.Key, Version: e.Version, Author: e.Author, Value: v}:
			default:
				if !w.dropped {
					w.dropped = true
					a.Note("%s watches the blackboard but has not read its last %d notices: later ones are dropped (blackboard.read has the latest values)", a.Agent.ID, watchQueue)
				}
			}
		}
	}
}

// deliver sends the queued notices to the watching agent, recorded, while
// the attempt is in GO; it ends with the watch.
func (w *boardWatch) deliver(a *attemptRun) {
	for {
		select {
		case <-w.done:
			return
		case n := <-w.queue:
			if !a.inGo.Load() || a.peer == nil {
				continue
			}
			if f := a.peer.Send(protocols.New(n)); f != nil {
				return // the agent is broken: its attempt ends with it
			}
		}
	}
}

// boardChanged tells the watchers of the writes this process just stored
// (puts, as written); writer is the attempt that wrote them, if one did.
func (r *run) boardChanged(writer *attemptRun, puts []record.BlackboardPut, written []record.BlackboardWritten) {
	if r.watches.count() == 0 {
		return
	}
	entries := make([]record.BlackboardEntry, 0, len(written))
	for i, w := range written {
		if i < len(puts) && !w.Conflict {
			entries = append(entries, record.BlackboardEntry{Key: puts[i].Key, Value: puts[i].Value, Version: w.Version, Author: puts[i].Author})
		}
	}
	r.watches.changed(writer, entries)
}

// pollBoard finds the writes another process made (orch bb set) for the
// watchers: the store's board is read only when some attempt watches it,
// and, cached by the store, costs one pragma while nobody else wrote.
func (r *run) pollBoard() {
	if r.watches.count() == 0 {
		return
	}
	board, err := r.blackboard()
	if err != nil {
		return // a busy database: look again at the next poll
	}
	entries := make([]record.BlackboardEntry, 0, len(board))
	for _, e := range board {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(x, y record.BlackboardEntry) int { return x.At.Compare(y.At) })
	r.watches.changed(nil, entries)
}

// endWatch ends attempt a's watch (see hostServices).
func (r *run) endWatch(a *attemptRun) { r.watches.end(a) }
