package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// AddCommand queues a request for the run's owner (orch go RUN CUE, from
// another process) and returns its id. The owner sees it in Commands.
func (d *DB) AddCommand(ctx context.Context, cmd record.Command) (int64, error) {
	if cmd.At.IsZero() {
		cmd.At = now()
	}
	r := &request{kind: kindAddCommand, cmd: cmd}
	err := func() error {
		switch {
		case cmd.RunID == "":
			return errors.New("no run id")
		case cmd.Kind == "":
			return errors.New("no kind")
		}
		return d.do(ctx, r)
	}()
	if err != nil {
		return 0, fmt.Errorf("sending command %s to run %s: %w", cmd.Kind, cmd.RunID, d.plain(err))
	}
	return r.id, nil
}

func (t *txn) addCommand(r *request) error {
	c := &r.cmd
	rs, err := t.run(c.RunID)
	if err != nil {
		return err
	}
	if !rs.exists {
		return fmt.Errorf("run %s does not exist", c.RunID)
	}
	res, err := t.exec(`INSERT INTO commands (run_id, kind, cue_id, arg, created_at) VALUES (?, ?, ?, ?, ?)`,
		c.RunID, c.Kind, c.Cue, c.Arg, c.At.UnixMicro())
	if err != nil {
		return err
	}
	r.id, err = res.LastInsertId()
	return err
}

// CommandDone marks a command done, so Commands no longer returns it. Marking
// one done twice is not an error.
func (d *DB) CommandDone(ctx context.Context, id int64) error {
	if err := d.do(ctx, &request{kind: kindCommandDone, id: id}); err != nil {
		return fmt.Errorf("marking command %d done: %w", id, d.plain(err))
	}
	return nil
}

// A person's answer is kept once, masked by its run's owner, in its
// question/answered event: the command that carried it keeps none.
func (t *txn) commandDone(id int64) error {
	res, err := t.exec(`UPDATE commands SET done_at = ?, arg = CASE kind WHEN 'answer' THEN '' ELSE arg END
		WHERE id = ? AND done_at IS NULL`, t.now.UnixMicro(), id)
	if err != nil || rowsAffected(res) > 0 {
		return err
	}
	var exists bool
	if err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM commands WHERE id = ?)`, id).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("there is no command %d", id)
	}
	return nil
}

// Commands returns the run's commands not yet done, oldest first.
func (d *DB) Commands(ctx context.Context, runID string) ([]record.Command, error) {
	q, done := d.reader()
	defer done()
	rows, err := q.QueryContext(ctx, `SELECT id, run_id, kind, cue_id, arg, created_at FROM commands
		WHERE run_id = ? AND done_at IS NULL ORDER BY id`, runID)
	if err != nil {
		return nil, fmt.Errorf("reading the commands of run %s: %w", runID, d.plain(err))
	}
	defer rows.Close()
	var cmds []record.Command
	for rows.Next() {
		var c record.Command
		var at sql.NullInt64
		if err := rows.Scan(&c.ID, &c.RunID, &c.Kind, &c.Cue, &c.Arg, &at); err != nil {
			return nil, fmt.Errorf("reading the commands of run %s: %w", runID, d.plain(err))
		}
		c.At = fromMicros(at)
		cmds = append(cmds, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the commands of run %s: %w", runID, d.plain(err))
	}
	return cmds, nil
}

// CooldownUntil returns when the agent's latest cooldown ends, even if that
// is past (the caller compares with the clock); zero when it never had one.
func (d *DB) CooldownUntil(ctx context.Context, agent string) (time.Time, error) {
	var until sql.NullInt64
	err := d.sql.QueryRowContext(ctx, `SELECT until FROM cooldowns WHERE agent_id = ?`, agent).Scan(&until)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the cooldown of agent %s: %w", agent, d.plain(err))
	}
	return fromMicros(until), nil
}
