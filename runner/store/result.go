package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/orch-cli/orch/runner/record"
)

// RunResult returns where a run's worktree branches were merged when it
// completed (its last merge event that names a result), or nil.
func (d *DB) RunResult(ctx context.Context, runID string) (*record.ResultBranch, error) {
	var raw string
	err := d.sql.QueryRowContext(ctx, `SELECT data FROM events
		WHERE run_id = ? AND type = ? AND state = ? AND json_extract(data, '$.result') IS NOT NULL
		ORDER BY seq DESC LIMIT 1`, runID, record.EvMerge, record.MergeCompleted).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the result of run %s: %w", runID, d.plain(err))
	}
	data, err := record.DecodeEventData(record.EvMerge, []byte(raw))
	if err != nil {
		return nil, fmt.Errorf("reading the result of run %s: %w", runID, err)
	}
	return data.(record.MergeData).Result, nil
}
