package store

import (
	"context"
	"fmt"
	"slices"
)

// AttemptTail returns the last n lines (at most) that one agent's attempt
// at a cue printed, oldest first: what a person needs to see under a
// failure. Lines are stored masked, so the tail is too.
func (d *DB) AttemptTail(ctx context.Context, runID, cue, agent string, attempt, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	// output_by_cue walked backwards: the attempt's last lines come first.
	rows, err := d.sql.QueryContext(ctx, `SELECT text FROM output
		WHERE run_id = ? AND cue_id = ? AND agent_id = ? AND attempt = ? ORDER BY id DESC LIMIT ?`,
		runID, cue, agent, attempt, n)
	if err != nil {
		return nil, fmt.Errorf("reading the output of %s attempt %d (%s) of run %s: %w", cue, attempt, agent, runID, d.plain(err))
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var text string
		if err := rows.Scan(&text); err != nil {
			return nil, fmt.Errorf("reading the output of %s attempt %d (%s) of run %s: %w", cue, attempt, agent, runID, d.plain(err))
		}
		lines = append(lines, text)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the output of %s attempt %d (%s) of run %s: %w", cue, attempt, agent, runID, d.plain(err))
	}
	slices.Reverse(lines)
	return lines, nil
}
