package agent

import (
	"context"
	"fmt"

	"github.com/orch-cli/orch/protocols"
)

// Changed is a notice that a watched blackboard key has a new version
// (blackboard.changed): Key, Version, Author, Value.
type Changed = protocols.BlackboardChanged

// ConflictError is orch's answer to BlackboardWriteIf when the key was not
// at the expected version: nothing was written. CurrentVersion is 0 when
// the key does not exist; Author wrote the current version.
type ConflictError struct {
	Key            string
	Expected       int64
	CurrentVersion int64
	Author         string
}

func (e *ConflictError) Error() string {
	if e.CurrentVersion == 0 {
		return fmt.Sprintf("blackboard key %q does not exist (expected version %d): not written", e.Key, e.Expected)
	}
	return fmt.Sprintf("blackboard key %q is at version %d (by %s), not %d: not written", e.Key, e.CurrentVersion, e.Author, e.Expected)
}

// BlackboardWriteIf sets key only if it is at version expected (0: only if
// it does not exist yet) and returns its new version; otherwise nothing is
// written and the error is a *ConflictError naming the current version and
// its author (read the key again, merge, and retry).
func (t *Task) BlackboardWriteIf(ctx context.Context, key string, value any, expected int64) (version int64, err error) {
	r, err := t.s.request(ctx, t, protocols.BlackboardWrite{CueID: t.CueID, Key: key, Value: value, ExpectedVersion: &expected})
	if err != nil {
		return 0, err
	}
	if c, ok := r.Body.(protocols.BlackboardConflict); ok {
		return 0, &ConflictError{Key: c.Key, Expected: expected, CurrentVersion: c.CurrentVersion, Author: c.Author}
	}
	return r.Body.(protocols.BlackboardAck).Version, nil
}

// Watch asks orch for a notice on Changes of every write by anyone else to
// one of keys, or to a key starting with prefix ("" for none), until this
// task's attempt ends. Watches add up.
func (t *Task) Watch(ctx context.Context, keys []string, prefix string) error {
	_, err := t.s.request(ctx, t, protocols.BlackboardWatch{CueID: t.CueID, Keys: keys, Prefix: prefix})
	return err
}

// Changes delivers the notices of the keys this task watches (Watch). The
// channel is never closed: select on it together with ctx.Done().
func (t *Task) Changes() <-chan Changed { return t.changes }

// MemoryDelete forgets the memory item key and its history (no error when
// there is no such item).
func (t *Task) MemoryDelete(ctx context.Context, key string) error {
	_, err := t.s.request(ctx, t, protocols.MemoryDelete{CueID: t.CueID, Key: key})
	return err
}
