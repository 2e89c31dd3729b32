package control

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/store"
)

// BoardEntry is one blackboard key's latest version, as orch bb get
// --output json prints it.
type BoardEntry struct {
	Key     string          `json:"key"`
	Value   json.RawMessage `json:"value"`
	Version int64           `json:"version"`
	Author  string          `json:"author"`
	At      *string         `json:"at"`

	Entry record.BlackboardEntry `json:"-"` // the store's, for renderers (At as a time)
}

func boardEntry(e record.BlackboardEntry) BoardEntry {
	return BoardEntry{Key: e.Key, Value: e.Value, Version: e.Version, Author: e.Author, At: timeJSON(e.At), Entry: e}
}

// BoardGet reads the latest version of a key of a run's blackboard; a key
// the board does not have is Absent.
func (c *Controller) BoardGet(ctx context.Context, run, key string) (*BoardEntry, error) {
	var out *BoardEntry
	err := c.reading(ctx, run, func(db *store.DB, id string) error {
		e, ok, err := db.BlackboardRead(ctx, id, key)
		if err != nil {
			return err
		}
		if !ok {
			return &Error{Kind: Absent, Err: fmt.Errorf("run %s has no blackboard key %q (orch bb ls --run %s lists its keys)", id, key, id)}
		}
		be := boardEntry(e)
		out = &be
		return nil
	})
	return out, err
}

// Board reads every key of a run's blackboard, sorted, each at its latest
// version; it returns the run's id too.
func (c *Controller) Board(ctx context.Context, run string) ([]BoardEntry, string, error) {
	out := []BoardEntry{}
	var runID string
	err := c.reading(ctx, run, func(db *store.DB, id string) error {
		runID = id
		board, err := db.Blackboard(ctx, id)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(mapKeys(board)) {
			out = append(out, boardEntry(board[k]))
		}
		return nil
	})
	return out, runID, err
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// BoardSetRequest writes a new version of a blackboard key.
type BoardSetRequest struct {
	Run   string
	Key   string
	Value json.RawMessage // the JSON to store
	// IfVersion, if set, writes only if the key is at that version (0: only
	// if it does not exist yet).
	IfVersion *int64
	// Unhandled: options the Temporal engine does not take (see Engine).
	Unhandled []string
}

// BoardWritten is a blackboard write that was made.
type BoardWritten struct {
	Run     string `json:"-"`
	Key     string `json:"key"`
	Version int64  `json:"version"`
	// Temporal: the run is on Temporal, and the write was handed over to
	// orch-temporal (as a signal: Version is not known here); Message is
	// what it said, when its output was captured.
	Temporal bool   `json:"-"`
	Message  string `json:"message,omitempty"`
}

// BoardSet writes a key of a run's blackboard, as the agent running this
// process when there is one (ORCH_AGENT_ID, in its own run ORCH_RUN_ID),
// else as "person". The value is masked of the secrets of this process's
// environment, which an agent inherits from orch, as the run's owner masks
// what it records. A run on Temporal gets the write as a signal.
func (c *Controller) BoardSet(ctx context.Context, req BoardSetRequest) (*BoardWritten, error) {
	var out *BoardWritten
	err := c.writing(ctx, req.Run, func(db *store.DB, id string) error {
		value := redact.New(os.Environ(), nil).JSON(req.Value)
		if t, err := onTemporal(ctx, db, id, "orch bb set", req.Unhandled); err != nil || t != nil {
			if err != nil {
				return err
			}
			msg, err := c.handOver(db, id, t, []string{"bb", "set"}, req.Key, string(value))
			out = &BoardWritten{Run: id, Key: req.Key, Temporal: true, Message: msg}
			return err
		}
		version, err := boardSet(ctx, db, id, req.Key, value, req.IfVersion)
		out = &BoardWritten{Run: id, Key: req.Key, Version: version}
		return err
	})
	return out, err
}

func boardSet(ctx context.Context, db *store.DB, id, key string, value json.RawMessage, ifVersion *int64) (int64, error) {
	state, err := db.RunState(ctx, id)
	if err != nil {
		return 0, err
	}
	if state.Ended() {
		return 0, refusedf("run %s is %s: its blackboard is kept as the run left it and cannot be written", id, state)
	}
	put := record.BlackboardPut{Key: key, Value: value, Author: "person", IfVersion: ifVersion}
	if agent := os.Getenv("ORCH_AGENT_ID"); agent != "" {
		put.Author = agent
	}
	if os.Getenv("ORCH_RUN_ID") == id { // the agent's own run: the write is its task's
		put.Cue = os.Getenv("ORCH_CUE_ID")
		put.Attempt, _ = strconv.Atoi(os.Getenv("ORCH_ATTEMPT"))
	}
	written, err := db.BlackboardWriteMany(ctx, id, []record.BlackboardPut{put})
	if err != nil {
		return 0, err
	}
	if w := written[0]; w.Conflict {
		if w.Version == 0 {
			return 0, refusedf("run %s: blackboard key %q does not exist, not at version %d: nothing written", id, key, *ifVersion)
		}
		return 0, refusedf("run %s: blackboard key %q is at version %d (by %s), not %d: nothing written (orch bb get %s shows it)",
			id, key, w.Version, w.Author, *ifVersion, key)
	}
	return written[0].Version, nil
}
