package store

import (
	"context"
	"database/sql"
	"fmt"
)

// UnfollowedTemporalRuns lists the runs on Temporal that have not ended and
// that no live follower holds (after --detach, an exit 3, orch go or stop
// with nobody following): what this store shows of them stops at the last
// event followed until something catches them up (control's catchUp).
func (d *DB) UnfollowedTemporalRuns(ctx context.Context) ([]string, error) {
	ids, err := d.unfollowedTemporalRuns(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the Temporal runs in %s: %w", d.path, d.plain(err))
	}
	return ids, nil
}

func (d *DB) unfollowedTemporalRuns(ctx context.Context) ([]string, error) {
	tx, done, err := d.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := tx.QueryContext(ctx, `
		SELECT r.id, r.owner_pid, r.owner_host, r.owner_token, r.heartbeat_at FROM runs r
		WHERE r.state NOT IN ('completed', 'failed', 'stopped')
			AND (SELECT json_extract(e.data, '$.temporal.workflow_id') FROM events e
				WHERE e.run_id = r.id AND e.type = 'run/started' ORDER BY e.seq LIMIT 1) IS NOT NULL
		ORDER BY r.started_at DESC, r.id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id, host, token string
		var pid int
		var heartbeat sql.NullInt64
		if err := rows.Scan(&id, &pid, &host, &token, &heartbeat); err != nil {
			return nil, err
		}
		if !alive(pid, host, token, fromMicros(heartbeat)) {
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}
