package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/orch-cli/orch/runner/record"
)

// prepared is an event checked and encoded in the caller's goroutine before
// it is queued, so that a malformed event fails its own caller and never a
// batch, and the writer spends its time writing.
type prepared struct {
	ev      record.Event
	at      int64 // ev.At in stored form
	data    any   // ev.Data encoded (the one encoding of it), or nil
	outputs any   // cue/state, attempt/ended: the outputs column (JSON), or nil
	payload any   // what else the projection needs beyond ev.Data, prepared ahead
	seq     int64 // assigned inside the transaction
}

// Payloads with their JSON columns marshalled ahead of time.
type (
	runStarted struct {
		inputs string
		agents []string // per cue, JSON arrays
		after  []string // per cue, JSON arrays
	}
)

// prepareEvent checks an event, encodes its data and prepares what its
// projection writes.
func prepareEvent(ev record.Event) (prepared, error) {
	if ev.At.IsZero() {
		ev.At = now()
	}
	rec := prepared{ev: ev, at: ev.At.UnixMicro()}
	if ev.RunID == "" {
		return rec, errors.New("the event has no run id")
	}
	if ev.Type == "" {
		return rec, errors.New("the event has no type")
	}
	if err := record.CheckEventData(ev.Type, ev.Data); err != nil {
		return rec, err
	}
	if ev.Data != nil {
		b, err := json.Marshal(ev.Data)
		if err != nil {
			return rec, fmt.Errorf("encoding its data: %w", err)
		}
		rec.data = string(b)
	}
	var err error
	switch ev.Type {
	case record.EvRunStarted:
		rec.payload, err = prepareRunStarted(ev.Data)
	case record.EvRunState:
		if !knownRunState(record.RunState(ev.State)) {
			err = fmt.Errorf("unknown run state %q", ev.State)
		}
	case record.EvCueState:
		d, _ := ev.Data.(record.CueStateData)
		if err = need(ev.Cue != "", "cue"); err == nil && !knownCueState(record.CueState(ev.State)) {
			err = fmt.Errorf("unknown cue state %q", ev.State)
		}
		rec.outputs = jsonOrNil(d.Outputs)
	case record.EvAttemptStarted:
		err = needAttempt(ev)
	case record.EvAttemptEnded:
		d, _ := ev.Data.(record.AttemptEndedData)
		if err = needAttempt(ev); err == nil && !knownAttemptState(record.AttemptState(ev.State)) {
			err = fmt.Errorf("unknown attempt state %q", ev.State)
		}
		rec.outputs = jsonOrNil(d.Outputs)
	case record.EvMessage:
		d, ok := ev.Data.(record.MessageData)
		if err = need(ok, "data"); err == nil && d.Type == "" {
			err = errors.New("the message has no message_type")
		}
	case record.EvCooldown:
		_, ok := ev.Data.(record.CooldownData)
		if err = need(ev.Agent != "", "agent"); err == nil {
			err = need(ok, "data")
		}
	case record.EvManualGo:
		err = need(ev.Cue != "", "cue")
	default:
		rec.payload, err = checkCollab(ev)
	}
	return rec, err
}

func prepareRunStarted(data record.EventData) (runStarted, error) {
	var p runStarted
	d, ok := data.(record.RunStartedData)
	if err := need(ok, "data"); err != nil {
		return p, err
	}
	inputs, err := json.Marshal(d.Inputs)
	if err != nil {
		return p, err
	}
	p.inputs = string(inputs)
	seen := make(map[string]bool, len(d.Cues))
	for _, c := range d.Cues {
		if c.ID == "" || seen[c.ID] {
			return p, fmt.Errorf("cue id %q is empty or repeated", c.ID)
		}
		seen[c.ID] = true
		agents := c.Agents
		if agents == nil {
			agents = []string{}
		}
		a, _ := json.Marshal(agents) // a []string always marshals
		p.agents = append(p.agents, string(a))
		after := c.After
		if after == nil {
			after = []string{}
		}
		a, _ = json.Marshal(after)
		p.after = append(p.after, string(a))
	}
	return p, nil
}

// attemptStarted is an attempt/started event's data (optional: none is a
// first choice, not a fallback).
func attemptStarted(data record.EventData) record.AttemptStartedData {
	d, _ := data.(record.AttemptStartedData)
	return d
}

func need(ok bool, field string) error {
	if !ok {
		return fmt.Errorf("the event has no %s", field)
	}
	return nil
}

func needAttempt(ev record.Event) error {
	if ev.Cue == "" || ev.Agent == "" || ev.Attempt < 1 {
		return fmt.Errorf("an attempt event needs a cue, an agent and an attempt number ≥ 1 (got %q, %q, %d)",
			ev.Cue, ev.Agent, ev.Attempt)
	}
	return nil
}

// jsonOrNil marshals a map for a JSON column; nil stays NULL.
func jsonOrNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	if len(m) == 0 { // most cues have no outputs: what json.Marshal would give, without encoding
		return "{}"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil // it was just unmarshalled, so it marshals
	}
	return string(b)
}

// applyEvent assigns the event its sequence number and writes it with its
// projection onto the state tables.
func (t *txn) applyEvent(rec *prepared) error {
	ev := &rec.ev
	seq, err := t.nextSeq(ev.RunID, ev.Type == record.EvRunStarted)
	if err != nil {
		return err
	}
	rec.seq = seq
	if ev.Type == record.EvRunStarted {
		err = t.projectRunStarted(rec)
	} else {
		err = t.project(rec)
	}
	if err != nil {
		return err
	}
	return t.insertEvent(rec)
}

// runSeq is what a transaction knows of a run: whether it exists and the
// last sequence number given out.
type runSeq struct {
	exists bool
	last   int64
}

// nextSeq returns the run's next sequence number. It reads MAX(seq) once per
// run per transaction: the transaction holds the write lock from BEGIN, so no
// other process can append between the read and the commit.
func (t *txn) nextSeq(runID string, creating bool) (int64, error) {
	rs, err := t.run(runID)
	if err != nil {
		return 0, err
	}
	switch {
	case creating && rs.exists:
		return 0, fmt.Errorf("run %s already exists", runID)
	case creating:
		rs.exists = true
	case !rs.exists:
		return 0, fmt.Errorf("run %s does not exist", runID)
	}
	rs.last++
	return rs.last, nil
}

func (t *txn) run(runID string) (*runSeq, error) {
	if rs := t.runs[runID]; rs != nil {
		return rs, nil
	}
	var last *int64
	var exists bool
	err := t.queryRow(`SELECT (SELECT max(seq) FROM events WHERE run_id = ?),
		EXISTS (SELECT 1 FROM runs WHERE id = ?)`, runID, runID).Scan(&last, &exists)
	if err != nil {
		return nil, err
	}
	rs := &runSeq{exists: exists}
	if last != nil {
		rs.last = *last
	}
	t.runs[runID] = rs
	return rs, nil
}

// insertEvent queues the event's row; flushRows writes the rows of a request
// together, a few multi-row INSERTs instead of one statement per event.
func (t *txn) insertEvent(rec *prepared) error {
	t.rows = append(t.rows, rec)
	return nil
}

// maxRowsPerInsert caps the rows of one multi-row INSERT. A request's rows
// go in as few statements as that allows, each prepared once per row count:
// at most this many statements are ever compiled per table.
const maxRowsPerInsert = 32

// flushRows writes the request's events: the rows of one run (usually all
// of them) in as few multi-row INSERTs as maxRowsPerInsert allows.
func (t *txn) flushRows() error {
	rows, args := t.rows, t.takeArgs()
	defer func() {
		clear(t.rows)
		t.rows = t.rows[:0]
		t.giveArgs(args)
	}()
	for len(rows) > 0 {
		runID := rows[0].ev.RunID
		n := 1
		for n < min(len(rows), maxRowsPerInsert) && rows[n].ev.RunID == runID {
			n++
		}
		args = append(args[:0], runID) // bound once: see insertRowsSQL
		for _, rec := range rows[:n] {
			ev := &rec.ev
			args = append(args, rec.seq, rec.at, ev.Type, ev.Cue, ev.Agent, ev.Attempt, ev.State, ev.Reason, rec.data)
		}
		if _, err := t.exec(t.d.insertRowsSQL(insertEventsPrefix, "", 10, n), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

const insertEventsPrefix = "INSERT INTO events (run_id, seq, at, type, cue_id, agent_id, attempt, state, reason, data) VALUES "

// insertRowsSQL is prefix, n rows of cols placeholders, then suffix. The
// first column is the run, the same in every row: each row names it ?1, so
// its value is bound once per statement, not once per row (every value
// bound costs a conversion and, for a text, a copy). The arguments are the
// run, then each row's other cols-1 values: SQLite numbers each plain ?
// after the highest number before it. The texts are kept, as they are the
// keys of the prepared statements and are asked for on every flush; only
// the holder of d.committing uses the cache.
func (d *DB) insertRowsSQL(prefix, suffix string, cols, n int) string {
	k := insertKey{prefix, suffix, cols, n}
	if q, ok := d.insertSQL[k]; ok {
		return q
	}
	if d.insertSQL == nil {
		d.insertSQL = map[insertKey]string{}
	}
	var b strings.Builder
	b.WriteString(prefix)
	row := "(?1" + strings.Repeat(", ?", cols-1) + ")"
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	b.WriteString(suffix)
	d.insertSQL[k] = b.String()
	return d.insertSQL[k]
}

type insertKey struct {
	prefix, suffix string
	cols, n        int
}

// flushRequest writes what a request gathered.
func (t *txn) flushRequest() error {
	if err := t.flushCues(); err != nil {
		return err
	}
	return t.flushRows()
}

func (t *txn) projectRunStarted(rec *prepared) error {
	ev, p, d := &rec.ev, rec.payload.(runStarted), rec.ev.Data.(record.RunStartedData)
	_, err := t.exec(`INSERT INTO runs (id, cuelist, spec_path, spec_hash, inputs, state, reason,
			created_at, started_at, owner_pid, owner_host, heartbeat_at, owner_token)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.RunID, d.Cuelist, d.SpecPath, d.SpecHash, p.inputs, record.RunRunning, ev.Reason,
		t.now.UnixMicro(), rec.at, d.OwnerPID, d.OwnerHost, rec.at, d.OwnerToken)
	if err != nil {
		return err
	}
	if d.OwnerToken != "" {
		t.holds(ev.RunID, d.OwnerToken)
	}
	// The cues go in as multi-row INSERTs, as events do (flushRows): a
	// 1,000-cue run's start costs 32 statements, not 1,000.
	const cols = 7
	for first := 0; first < len(d.Cues); first += maxRowsPerInsert {
		n := min(len(d.Cues)-first, maxRowsPerInsert)
		args := make([]any, 0, 1+n*(cols-1))
		args = append(args, ev.RunID)
		for i := first; i < first+n; i++ {
			args = append(args, d.Cues[i].ID, i, p.agents[i], p.after[i], d.Cues[i].Manual, record.CuePending)
		}
		if _, err := t.exec(t.d.insertRowsSQL(insertCuesPrefix, "", cols, n), args...); err != nil {
			return err
		}
	}
	return nil
}

const insertCuesPrefix = "INSERT INTO cues (run_id, cue_id, position, agents, after_cues, manual, state) VALUES "

// project applies an event to the state tables; types without state (notes,
// blackboard updates, types this orch does not know) are only logged.
func (t *txn) project(rec *prepared) error {
	if ok, err := t.projectCollab(rec); ok {
		return err
	}
	ev := &rec.ev
	switch ev.Type {
	case record.EvRunState:
		var ended any
		if record.RunState(ev.State).Ended() {
			ended = rec.at
		}
		// A run that pauses or ends releases its owner's lease: anyone may
		// continue it at once.
		release := record.RunState(ev.State) != record.RunRunning
		_, err := t.exec(`UPDATE runs SET state = ?, reason = ?, ended_at = ?,
				owner_token = CASE WHEN ? THEN '' ELSE owner_token END WHERE id = ?`,
			ev.State, ev.Reason, ended, release, ev.RunID)
		if err == nil && release {
			t.holds(ev.RunID, "")
		}
		return err

	case record.EvConflict:
		_, err := t.exec(`INSERT INTO conflicts (run_id, seq, data) VALUES (?, ?, ?)`, ev.RunID, rec.seq, rec.data)
		return err

	case record.EvCueState:
		// Each phase keeps the time the cue last entered it; a final state
		// sets ended_at, and any other clears it (a resumed cue runs again).
		u := t.cue(ev)
		u.state, u.reason = ev.State, ev.Reason
		switch record.CueState(ev.State) {
		case record.CueWarning:
			u.phase[0] = rec.at
		case record.CueStandby:
			u.phase[1] = rec.at
		case record.CueGo:
			u.phase[2] = rec.at
		}
		u.setEnded, u.ended = true, nil
		if record.CueState(ev.State).Final() {
			u.ended = rec.at
		}
		if out := rec.outputs; out != nil {
			u.outputs = out
		}
		if record.CueState(ev.State) == record.CueInterrupted {
			u.approved = 0 // a GO given before the interruption does not run it again
		}
		return nil

	case record.EvAttemptStarted:
		u := t.cue(ev)
		u.attempts = max(u.attempts, ev.Attempt)
		// A number is started once, but for an attempt paused for a
		// manual GO, which is prepared again under it (sched.AttemptPaused).
		res, err := t.exec(`INSERT INTO attempts (run_id, cue_id, number, agent_id, state, fallback, started_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, cue_id, number, agent_id) DO UPDATE SET state = excluded.state, reason = '', class = '',
				exit_code = NULL, pid = 0, ended_at = NULL, started_at = excluded.started_at
			WHERE attempts.state = ?`,
			ev.RunID, ev.Cue, ev.Attempt, ev.Agent, record.AttemptRunning, attemptStarted(rec.ev.Data).Fallback, rec.at, record.AttemptPaused)
		if isForeignKeyViolation(err) {
			return fmt.Errorf("run %s has no cue %q", ev.RunID, ev.Cue) // the attempt's cue row is its parent
		}
		if err == nil && rowsAffected(res) == 0 {
			return fmt.Errorf("attempt %d of agent %s at cue %s was started already", ev.Attempt, ev.Agent, ev.Cue)
		}
		return err

	case record.EvAttemptEnded:
		d, _ := ev.Data.(record.AttemptEndedData)
		res, err := t.exec(`UPDATE attempts SET state = ?, reason = ?, class = ?, exit_code = ?,
				pid = coalesce(nullif(?, 0), pid), outputs = coalesce(?, outputs), ended_at = ?
			WHERE run_id = ? AND cue_id = ? AND number = ? AND agent_id = ?`,
			ev.State, ev.Reason, d.Class, d.ExitCode, d.PID, rec.outputs, rec.at,
			ev.RunID, ev.Cue, ev.Attempt, ev.Agent)
		if err == nil && rowsAffected(res) == 0 {
			return fmt.Errorf("attempt %d of agent %s at cue %s was never started", ev.Attempt, ev.Agent, ev.Cue)
		}
		return err

	case record.EvMessage:
		return nil // the event is the record: the messages view reads it

	case record.EvCooldown:
		// The latest cooldown of an agent replaces an earlier one, whichever
		// run set it.
		_, err := t.exec(`INSERT INTO cooldowns (agent_id, until, reason, run_id, set_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (agent_id) DO UPDATE SET until = excluded.until, reason = excluded.reason,
				run_id = excluded.run_id, set_at = excluded.set_at`,
			ev.Agent, micros(ev.Data.(record.CooldownData).Until), ev.Reason, ev.RunID, rec.at)
		return err

	case record.EvManualGo:
		t.cue(ev).approved = 1
		return nil
	}
	return nil
}

func (t *txn) insertLog(l *record.LogLine) error {
	rs, err := t.run(l.RunID)
	if err != nil {
		return err
	}
	if !rs.exists {
		return fmt.Errorf("storing agent output: run %s does not exist", l.RunID)
	}
	_, err = t.exec(`INSERT INTO output (run_id, cue_id, agent_id, attempt, stream, at, text) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		l.RunID, l.Cue, l.Agent, l.Attempt, l.Stream, l.At.UnixMicro(), l.Text)
	if err != nil {
		return fmt.Errorf("storing agent output of run %s: %w", l.RunID, err)
	}
	return nil
}

func knownRunState(s record.RunState) bool {
	switch s {
	case record.RunRunning, record.RunPaused, record.RunCompleted, record.RunFailed, record.RunStopped, record.RunInterrupted:
		return true
	}
	return false
}

func knownCueState(s record.CueState) bool {
	return s.Final() || s == record.CuePending || s == record.CueWarning || s == record.CueStandby ||
		s == record.CueGo || s == record.CueInterrupted
}

func knownAttemptState(s record.AttemptState) bool {
	switch s {
	case record.AttemptRunning, record.AttemptCompleted, record.AttemptFailed, record.AttemptStopped, record.AttemptInterrupted, record.AttemptPaused:
		return true
	}
	return false
}
