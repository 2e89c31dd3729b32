package control

import (
	"context"
	"fmt"
	"regexp"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// attemptKey names one attempt of one agent at a cue.
type attemptKey struct {
	cue, agent string
	number     int
}

// attemptNotes are the run's notes about an attempt (a retry to come, a
// worker lost and the GO dispatched again), by attempt, in order: orch
// status shows them under the attempt they are about.
func attemptNotes(ctx context.Context, db *store.DB, id string) (map[attemptKey][]string, error) {
	notes, err := db.EventsOfType(ctx, id, record.EvNote)
	if err != nil {
		return nil, err
	}
	out := map[attemptKey][]string{}
	for _, n := range notes {
		if n.Attempt == 0 || n.Cue == "" {
			continue
		}
		k := attemptKey{n.Cue, n.Agent, n.Attempt}
		out[k] = append(out[k], attemptPrefix.ReplaceAllString(n.Reason, ""))
	}
	return out, nil
}

// attemptPrefix starts a note that names its attempt, which status shows
// next to it already.
var attemptPrefix = regexp.MustCompile(`^attempt \d+: `)

// NoteLine is how orch status prints an attempt's note.
func NoteLine(cue string, a AttemptStatus, note string) string {
	return fmt.Sprintf("%s attempt %d (%s): %s", cue, a.Number, a.Agent, note)
}
