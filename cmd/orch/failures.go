package main

import (
	"context"
	"fmt"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// defaultTailLines is how many of its last output lines a failed attempt
// shows (orch run and orch status --tail-lines).
const defaultTailLines = control.DefaultTailLines

// tailFunc returns the last lines of output of the attempt an attempt/ended
// event closes (nil when it printed nothing or they cannot be read: the
// display goes on without them, orch logs has them).
type tailFunc func(e record.Event) []string

// storeTail reads attempts' tails from db, n lines each (0: none).
func storeTail(db *store.DB, n int) tailFunc {
	if n <= 0 {
		return nil
	}
	return func(e record.Event) []string {
		lines, _ := db.AttemptTail(context.Background(), e.RunID, e.Cue, e.Agent, e.Attempt, n)
		return lines
	}
}

// tailBlock shows an attempt's last lines under its failure: a line naming
// them, then each (made printable), indented.
func tailBlock(indent, agent string, attempt int, lines []string) []string {
	if len(lines) == 0 {
		return nil
	}
	head := fmt.Sprintf("%slast %d lines of %s#%d:", indent, len(lines), agent, attempt)
	if len(lines) == 1 {
		head = fmt.Sprintf("%slast line of %s#%d:", indent, agent, attempt)
	}
	out := []string{head}
	for _, l := range lines {
		out = append(out, indent+"  "+printable(l))
	}
	return out
}
