package store

import (
	"fmt"
	"strings"

	"github.com/orch-cli/orch/runner/record"
)

// cueUpdate gathers what one request changes of one cue, written as one
// UPDATE: a cue that goes WARNING, STANDBY and GO in one decision costs one
// statement, not three.
type cueUpdate struct {
	ev       *record.Event // the first event that touched the cue, for errors
	state    any           // new state, or nil
	reason   any
	phase    [3]any // warning_at, standby_at, go_at
	setEnded bool
	ended    any
	outputs  any
	attempts int
	approved any // 1 when a person said GO, 0 to forget an earlier GO (interrupted), nil: unchanged
}

func (t *txn) cue(ev *record.Event) *cueUpdate {
	key := [2]string{ev.RunID, ev.Cue}
	if u := t.cues[key]; u != nil {
		return u
	}
	if t.cues == nil {
		t.cues = map[[2]string]*cueUpdate{}
	}
	var u *cueUpdate
	if n := len(t.spare); n > 0 {
		u, t.spare = t.spare[n-1], t.spare[:n-1]
		*u = cueUpdate{ev: ev}
	} else {
		u = &cueUpdate{ev: ev}
	}
	t.cues[key] = u
	t.cueOrder = append(t.cueOrder, key)
	return u
}

// cueColumns are what an UPDATE of a cue may set, in the order of its
// arguments (the state goes with its reason).
var cueColumns = [...]string{
	"state = ?, reason = ?",
	"warning_at = ?", "standby_at = ?", "go_at = ?",
	"ended_at = ?",
	"outputs = ?",
	"attempts = max(attempts, ?)",
	"approved = ?",
}

// columns returns which of cueColumns u sets (bit i: cueColumns[i]) and
// appends their values to args. Each UPDATE sets only what changed: the
// three cue UPDATEs of a chained cue's decision bind 20 values, not the 36
// they bound when every column was written as coalesce(?, column).
func (u *cueUpdate) columns(args []any) (uint8, []any) {
	var set uint8
	add := func(bit int, values ...any) {
		set |= 1 << bit
		args = append(args, values...)
	}
	if u.state != nil {
		add(0, u.state, u.reason)
	}
	for i, at := range u.phase {
		if at != nil {
			add(1+i, at)
		}
	}
	if u.setEnded {
		add(4, u.ended)
	}
	if u.outputs != nil {
		add(5, u.outputs)
	}
	if u.attempts > 0 {
		add(6, u.attempts)
	}
	if u.approved != nil {
		add(7, u.approved)
	}
	return set, args
}

// cueUpdateSQL is the UPDATE of the columns set names; the texts are kept,
// as insertRowsSQL's are (only the holder of d.committing uses them).
func (d *DB) cueUpdateSQL(set uint8) string {
	if q, ok := d.cueSQL[set]; ok {
		return q
	}
	var cols []string
	for i, c := range cueColumns {
		if set&(1<<i) != 0 {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		cols = append(cols, "state = state") // nothing to change: the UPDATE still says whether the cue exists
	}
	if d.cueSQL == nil {
		d.cueSQL = map[uint8]string{}
	}
	d.cueSQL[set] = "UPDATE cues SET " + strings.Join(cols, ", ") + " WHERE run_id = ? AND cue_id = ?"
	return d.cueSQL[set]
}

// flushCues writes the gathered cue updates; one that matches no cue means
// an event named a cue the run does not have. (One UPDATE ... FROM VALUES
// for all of them measured slower: SQLite materializes the join.)
func (t *txn) flushCues() error {
	args := t.takeArgs()
	defer func() { t.giveArgs(args) }()
	for _, key := range t.cueOrder {
		u := t.cues[key]
		var set uint8
		set, args = u.columns(args[:0])
		args = append(args, key[0], key[1])
		res, err := t.exec(t.d.cueUpdateSQL(set), args...)
		if err == nil && rowsAffected(res) == 0 {
			err = fmt.Errorf("run %s has no cue %q", u.ev.RunID, u.ev.Cue)
		}
		if err != nil {
			return err
		}
	}
	t.releaseCues()
	return nil
}
