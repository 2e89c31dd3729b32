package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// RunDetail is one run for `orch status RUN`: its summary, where it came
// from, its owner and its cues in plan order.
type RunDetail struct {
	RunSummary
	SpecPath    string
	SpecHash    string
	Inputs      map[string]any
	OwnerPID    int
	OwnerHost   string
	OwnerToken  string // empty when no process holds the run (paused, ended)
	Heartbeat   time.Time
	Cues        []CueDetail           // the plan's cues in plan order, then child tasks in the order they started
	Conflicts   []record.ConflictData // decisions taken at run time
	Questions   []QuestionDetail      // in the order asked
	Escalations []Escalation          // the high and critical ones, in the order sent
	Credits     float64               // reported by the agents (status.usage)
	Used        record.Usage          // the run's totals as the agents reported them (Credits too)
}

// CueDetail is one cue of a run, or a child task (a handoff's receiver, a
// spawned agent: Parent is set); times are zero until it gets there.
type CueDetail struct {
	ID        string
	Parent    string          // the task that started it; "" for a plan cue
	Kind      string          // handoff or spawn; item for a fan-out's item (dropped: of an earlier expansion); "" for a plan cue
	Item      json.RawMessage // an item's item
	Depth     int             // 0 for a plan cue, 1 for its children, ...
	TaskRef   string          // the task_id the sender of a handoff gave
	Agents    []string
	After     []string // the cues it waits for (recorded from schema 6 on)
	Manual    bool     // a person says GO
	State     record.CueState
	Reason    string
	WarningAt time.Time
	StandbyAt time.Time
	GoAt      time.Time
	EndedAt   time.Time
	Outputs   map[string]any
	Approved  bool
	Attempts  []AttemptDetail // by number
}

// AttemptDetail is one attempt of one agent at a cue.
type AttemptDetail struct {
	Number    int
	Agent     string
	State     record.AttemptState
	Reason    string
	Class     string
	ExitCode  *int // nil unless the process exited by itself
	PID       int
	Fallback  bool
	StartedAt time.Time
	EndedAt   time.Time
	Used      record.Usage // what its agent reported it used
	// The git worktree branch it worked on (workspace: worktree), and the
	// commit it ended with (a completed attempt's).
	WorktreeBranch, WorktreeCommit string
}

// Used is what a cue's attempts reported they used, together.
func (c *CueDetail) Used() record.Usage {
	var u record.Usage
	for _, a := range c.Attempts {
		u.CostUSD += a.Used.CostUSD
		u.InputTokens += a.Used.InputTokens
		u.OutputTokens += a.Used.OutputTokens
		u.Credits += a.Used.Credits
	}
	return u
}

// Run returns one run with its cues and attempts. It reads the state tables
// and, of the event log, only the messages to the person (through their
// index), so its cost follows the number of cues.
func (d *DB) Run(ctx context.Context, id string) (*RunDetail, error) {
	r, err := d.run(ctx, id)
	if err != nil && !errors.As(err, new(*NotFoundError)) {
		err = fmt.Errorf("reading run %s from %s: %w", id, d.path, d.plain(err))
	}
	return r, err
}

func (d *DB) run(ctx context.Context, id string) (*RunDetail, error) {
	tx, done, err := d.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	r := &RunDetail{}
	var inputs string
	var started, ended, heartbeat sql.NullInt64
	var token string
	err = tx.QueryRowContext(ctx, `SELECT id, cuelist, state, reason, started_at, ended_at,
			spec_path, spec_hash, inputs, owner_pid, owner_host, heartbeat_at, owner_token, credits,
			cost_usd, input_tokens, output_tokens
		FROM runs WHERE id = ?`, id).Scan(&r.ID, &r.Cuelist, &r.State, &r.Reason, &started, &ended,
		&r.SpecPath, &r.SpecHash, &inputs, &r.OwnerPID, &r.OwnerHost, &heartbeat, &token, &r.Credits,
		&r.Used.CostUSD, &r.Used.InputTokens, &r.Used.OutputTokens)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFoundError{Ref: id}
	}
	if err != nil {
		return nil, err
	}
	r.StartedAt, r.EndedAt, r.Heartbeat = fromMicros(started), fromMicros(ended), fromMicros(heartbeat)
	r.OwnerToken = token
	r.Used.Credits = r.Credits
	if r.State == record.RunRunning && !alive(r.OwnerPID, r.OwnerHost, token, r.Heartbeat) {
		reason, onTemporal, err := unfollowed(ctx, tx, r.ID)
		switch {
		case err != nil:
			return nil, err
		case onTemporal:
			r.Reason = reason
		default:
			r.State, r.Reason = record.RunInterrupted, fmt.Sprintf("its owner (process %d on %s) is gone; orch resume %s continues it", r.OwnerPID, r.OwnerHost, r.ID)
		}
	}
	if r.State == record.RunInterrupted && r.EndedAt.IsZero() {
		if r.EndedAt, err = lastEventAt(ctx, tx, r.ID); err != nil {
			return nil, err
		}
	}
	if err := unmarshalColumn(inputs, &r.Inputs, "inputs"); err != nil {
		return nil, err
	}

	rows, err := tx.QueryContext(ctx, `SELECT cue_id, agents, after_cues, manual, state, reason, warning_at, standby_at, go_at,
			ended_at, outputs, approved, parent, kind, depth, task_ref, CASE kind WHEN 'item' THEN context END
		FROM cues WHERE run_id = ? ORDER BY position`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	index := map[string]int{}
	for rows.Next() {
		var c CueDetail
		var agents, after string
		var outputs, item sql.NullString
		var warning, standby, goAt, ended sql.NullInt64
		if err := rows.Scan(&c.ID, &agents, &after, &c.Manual, &c.State, &c.Reason, &warning, &standby, &goAt, &ended,
			&outputs, &c.Approved, &c.Parent, &c.Kind, &c.Depth, &c.TaskRef, &item); err != nil {
			return nil, err
		}
		if item.Valid {
			c.Item = json.RawMessage(item.String)
		}
		c.WarningAt, c.StandbyAt, c.GoAt, c.EndedAt = fromMicros(warning), fromMicros(standby), fromMicros(goAt), fromMicros(ended)
		if err := unmarshalColumn(agents, &c.Agents, "agents"); err != nil {
			return nil, err
		}
		if after != "[]" {
			if err := unmarshalColumn(after, &c.After, "after_cues"); err != nil {
				return nil, err
			}
		}
		if outputs.Valid {
			if err := unmarshalColumn(outputs.String, &c.Outputs, "outputs"); err != nil {
				return nil, err
			}
		}
		if c.Parent == "" { // the counts are of the plan's cues
			r.count(c.State)
		}
		index[c.ID] = len(r.Cues)
		r.Cues = append(r.Cues, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := d.attachAttempts(ctx, tx, r, index); err != nil {
		return nil, err
	}
	if r.Escalations, err = escalations(ctx, tx, r.ID, false); err != nil {
		return nil, err
	}
	if r.Questions, err = questions(ctx, tx, r.ID, false); err != nil {
		return nil, err
	}
	for _, q := range r.Questions {
		if q.State == QuestionOpen {
			r.OpenQuestions++
		}
	}
	return r, d.attachConflicts(ctx, tx, r)
}

// lastEventAt is when a run whose owner is gone last did something: the end
// of its time, so that its durations stop growing while nobody runs it.
func lastEventAt(ctx context.Context, tx *sql.Tx, runID string) (time.Time, error) {
	var at sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT at FROM events WHERE run_id = ? ORDER BY seq DESC LIMIT 1`, runID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	return fromMicros(at), err
}

// attachConflicts reads the conflict decisions taken at run time.
func (d *DB) attachConflicts(ctx context.Context, tx *sql.Tx, r *RunDetail) error {
	rows, err := tx.QueryContext(ctx, `SELECT data FROM conflicts WHERE run_id = ? ORDER BY seq`, r.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var data string
		var c record.ConflictData
		if err := rows.Scan(&data); err != nil {
			return err
		}
		if err := unmarshalColumn(data, &c, "conflicts.data"); err != nil {
			return err
		}
		r.Conflicts = append(r.Conflicts, c)
	}
	return rows.Err()
}

func (d *DB) attachAttempts(ctx context.Context, tx *sql.Tx, r *RunDetail, index map[string]int) error {
	rows, err := tx.QueryContext(ctx, `SELECT cue_id, number, agent_id, state, reason, class, exit_code, pid,
			fallback, started_at, ended_at, credits, cost_usd, input_tokens, output_tokens,
			worktree_branch, worktree_commit
		FROM attempts WHERE run_id = ? ORDER BY cue_id, number, agent_id`, r.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a AttemptDetail
		var cue string
		var exit sql.NullInt64
		var started, ended sql.NullInt64
		if err := rows.Scan(&cue, &a.Number, &a.Agent, &a.State, &a.Reason, &a.Class, &exit, &a.PID,
			&a.Fallback, &started, &ended, &a.Used.Credits, &a.Used.CostUSD, &a.Used.InputTokens, &a.Used.OutputTokens,
			&a.WorktreeBranch, &a.WorktreeCommit); err != nil {
			return err
		}
		if exit.Valid {
			code := int(exit.Int64)
			a.ExitCode = &code
		}
		a.StartedAt, a.EndedAt = fromMicros(started), fromMicros(ended)
		if i, ok := index[cue]; ok {
			r.Cues[i].Attempts = append(r.Cues[i].Attempts, a)
		}
	}
	return rows.Err()
}

// count adds a cue in state s to the summary's counters.
func (s *RunSummary) count(state record.CueState) {
	s.Cues++
	switch state {
	case record.CueCompleted:
		s.Completed++
	case record.CueFailed:
		s.Failed++
	case record.CueWarning, record.CueStandby, record.CueGo:
		s.Active++
	}
}

// LoadRun reads what the runner needs to continue a run: its start data,
// rebuilt from the runs and cues rows, and the state of each cue.
func (d *DB) LoadRun(ctx context.Context, runID string) (*record.RunRecord, error) {
	r, err := d.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	rec := &record.RunRecord{
		ID:     r.ID,
		State:  r.State,
		Reason: r.Reason,
		Started: record.RunStartedData{
			Cuelist:   r.Cuelist,
			SpecPath:  r.SpecPath,
			SpecHash:  r.SpecHash,
			Inputs:    r.Inputs,
			OwnerPID:  r.OwnerPID,
			OwnerHost: r.OwnerHost,
		},
		Cues:      make(map[string]record.CueRecord, len(r.Cues)),
		Questions: len(r.Questions),
		Used:      r.Used,
	}
	for _, q := range r.Questions {
		if q.State == QuestionOpen {
			rec.OpenQuestions = append(rec.OpenQuestions, q.ID)
		}
	}
	// What only the run.started event holds (the first of the run): the
	// project root of its artifacts, and where a Temporal run runs.
	if first, err := d.Events(ctx, runID, 0, 1); err != nil {
		return nil, err
	} else if len(first) == 1 {
		if sd, ok := first[0].Data.(record.RunStartedData); ok {
			rec.Started.Root, rec.Started.Temporal = sd.Root, sd.Temporal
		}
	}
	for _, c := range r.Cues {
		if c.Parent == "" { // the plan's cues; children are in Cues only
			rec.Started.Cues = append(rec.Started.Cues, record.CueInfo{ID: c.ID, Agents: c.Agents, After: c.After, Manual: c.Manual})
		}
		if c.Kind == "dropped" {
			continue // an item of an earlier expansion: its record stays, the run has no such task any more
		}
		cr := record.CueRecord{State: c.State, Reason: c.Reason, Approved: c.Approved, AgentAttempts: map[string]int{},
			ReachedGo: c.State == record.CueGo, Parent: c.Parent, Kind: c.Kind, Item: c.Item}
		if c.Kind == "item" {
			cr.Position = len(rec.Cues) // the rows come in the order the run made them
		}
		for _, a := range c.Attempts {
			cr.Attempts = max(cr.Attempts, a.Number)
			if a.State == record.AttemptFailed {
				cr.AgentAttempts[a.Agent]++
			}
			if a.State == record.AttemptRunning {
				cr.Running = append(cr.Running, record.AttemptRef{Agent: a.Agent, Number: a.Number})
			}
			if a.State == record.AttemptPaused {
				cr.Paused = append(cr.Paused, record.AttemptRef{Agent: a.Agent, Number: a.Number})
			}
		}
		if c.State == record.CueCompleted {
			cr.Outputs = c.Outputs
		}
		rec.Cues[c.ID] = cr
	}
	return rec, nil
}

func unmarshalColumn(s string, v any, column string) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("column %s holds invalid JSON: %w", column, err)
	}
	return nil
}
