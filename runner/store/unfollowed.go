package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/orch-cli/orch/runner/record"
)

// A run on Temporal (run.started has a temporal block) goes on in its
// workflow whether or not an orch-temporal process follows it into this
// store: the follower holds the run's lease while it follows, and when it
// has detached (Ctrl-C, --detach, a crash) the run is not interrupted but
// unfollowed. It reads as running, saying so and how to follow it again.

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// unfollowed returns the reason a running run whose lease lapsed reads with
// when it runs on Temporal (ok false: it does not, it is interrupted).
func unfollowed(ctx context.Context, tx rowQuerier, runID string) (reason string, ok bool, err error) {
	var wf sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT json_extract(data, '$.temporal.workflow_id') FROM events
		WHERE run_id = ? AND type = 'run/started' ORDER BY seq LIMIT 1`, runID).Scan(&wf)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !wf.Valid) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("on Temporal (workflow %s), followed by nobody: what is shown here stops at the last event followed; orch resume %s follows it again", wf.String, runID), true, nil
}

// TemporalRun is where run id's workflow is when it runs on Temporal, from
// its run.started event (nil: the local engine). LoadRun rebuilds the start
// data from the runs row, which does not keep it.
func (d *DB) TemporalRun(ctx context.Context, id string) (*record.TemporalRun, error) {
	evs, err := d.Events(ctx, id, 0, 1)
	if err != nil || len(evs) == 0 || evs[0].Type != record.EvRunStarted {
		return nil, err
	}
	data, _ := evs[0].Data.(record.RunStartedData)
	return data.Temporal, nil
}
