package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/orch-cli/orch/runner/record"
)

// A fan-out's items (a cue with for_each) become cue rows, as child tasks
// do: parent the for_each cue, kind "item", the item (JSON) in context,
// placed after every row the run has. Their states and attempts are then
// recorded as any cue's.

// fanOut is what a cue/expanded event's projection writes beyond its data.
type fanOut struct {
	items []string // each item as JSON, in order
}

func prepareFanOut(ev record.Event) (fanOut, error) {
	var p fanOut
	if ev.Cue == "" {
		return p, errors.New("a cue/expanded event needs the for_each cue")
	}
	d, ok := ev.Data.(record.FanOutData)
	if err := need(ok, "data"); err != nil {
		return p, err
	}
	p.items = make([]string, len(d.Items))
	for i, it := range d.Items {
		// An item's id is its cue's, then its name in brackets: it can
		// never be a plan cue's id (which cannot hold brackets).
		name, ok := strings.CutPrefix(it.ID, ev.Cue+"[")
		if !ok || !strings.HasSuffix(name, "]") || len(name) < 2 || strings.ContainsAny(name[:len(name)-1], "[]/") {
			return p, fmt.Errorf("item id %q is not its cue's id %q followed by [NAME]", it.ID, ev.Cue)
		}
		b, err := json.Marshal(it.Item)
		if err != nil {
			return p, fmt.Errorf("item %s: %w", it.ID, err)
		}
		p.items[i] = string(b)
	}
	return p, nil
}

// projectFanOut creates the items' rows, pending. A cue expanded again (an
// orch retry whose list changed) takes back the rows of the items it
// names, pending, and marks the others dropped: their record stays.
func (t *txn) projectFanOut(rec *prepared) error {
	ev, p, d := &rec.ev, rec.payload.(fanOut), rec.ev.Data.(record.FanOutData)
	var agents string
	var last sql.NullInt64
	err := t.queryRow(`SELECT agents, (SELECT max(position) FROM cues WHERE run_id = ?1) FROM cues WHERE run_id = ?1 AND cue_id = ?2`,
		ev.RunID, ev.Cue).Scan(&agents, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %s has no cue %q to expand", ev.RunID, ev.Cue)
	}
	if err != nil {
		return err
	}
	if _, err := t.exec(`UPDATE cues SET kind = 'dropped' WHERE run_id = ? AND parent = ? AND kind = 'item'`, ev.RunID, ev.Cue); err != nil {
		return err
	}
	for i, it := range d.Items {
		if _, err := t.exec(`INSERT INTO cues (run_id, cue_id, position, agents, state, parent, kind, context)
			VALUES (?, ?, ?, ?, ?, ?, 'item', ?)
			ON CONFLICT (run_id, cue_id) DO UPDATE SET state = excluded.state, reason = '', kind = 'item',
				context = excluded.context, outputs = NULL, ended_at = NULL, approved = 0`,
			ev.RunID, it.ID, last.Int64+1+int64(i), agents, record.CuePending, ev.Cue, p.items[i]); err != nil {
			return err
		}
	}
	return nil
}
