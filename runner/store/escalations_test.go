package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

func escalationEvent(runID, cue, severity, text string) record.Event {
	body, _ := json.Marshal(map[string]string{"severity": severity, "error": text})
	return record.Event{RunID: runID, Type: record.EvUserMessage, Cue: cue, Agent: cue + "-agent", Attempt: 1,
		Data: record.UserMessageData{Kind: "escalation", From: cue + "-agent", Body: body}}
}

// TestEscalationsInInbox: a high or critical escalation is in the inbox,
// whatever its run's state, until it is acknowledged; a medium one, or
// another message to the person, never is.
func TestEscalationsInInbox(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "A", "B")
	appendOK(t, d,
		escalationEvent("r1", "A", "high", "the disk is full"),
		escalationEvent("r1", "A", "medium", "slow network"),
		record.Event{RunID: "r1", Type: record.EvUserMessage, Cue: "B", Agent: "B-agent", Data: record.UserMessageData{Kind: "message", From: "B-agent", Body: json.RawMessage(`"hello"`)}},
		escalationEvent("r1", "B", "critical", "credentials <b>leaked</b>"),
		record.Event{RunID: "r1", Type: record.EvRunState, State: string(record.RunCompleted)},
	)
	open, err := d.Escalations(ctx, "r1", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 2 || open[0].Severity != "high" || open[0].Text != "the disk is full" || open[0].Cue != "A" || open[0].Agent != "A-agent" ||
		open[1].Severity != "critical" || open[1].Text != "credentials <b>leaked</b>" {
		t.Fatalf("open escalations: %+v", open)
	}
	items, err := d.Inbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Kind != "escalation" || items[0].Severity == "" {
		t.Fatalf("inbox: %+v", items)
	}
	first := open[0].ID
	appendOK(t, d, record.Event{RunID: "r1", Type: record.EvEscalationAcked, Data: record.EscalationAckedData{ID: first, By: "ann@box"}})

	items, err = d.Inbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].ID != open[1].ID || items[0].Run != "r1" || items[0].Asker != "B-agent" {
		t.Errorf("inbox after acknowledging %s: %+v", first, items)
	}
	all, err := d.Escalations(ctx, "r1", false)
	if err != nil || len(all) != 2 || all[0].AckedBy != "ann@box" || all[0].AckedAt.IsZero() || !all[1].AckedAt.IsZero() {
		t.Errorf("all escalations: %+v, %v", all, err)
	}
	if es, err := d.Escalation(ctx, "r1", first); err != nil || es.AckedBy != "ann@box" {
		t.Errorf("Escalation(%s): %+v, %v", first, es, err)
	}
	for _, id := range []string{"e999", "q1", ""} {
		if _, err := d.Escalation(ctx, "r1", id); !errors.Is(err, ErrNoEscalation) {
			t.Errorf("Escalation(%q): %v, want ErrNoEscalation", id, err)
		}
	}
}

// TestEscalationQueryUsesIndexes: the inbox finds escalations and their
// acknowledgements through the partial indexes, not by reading every event
// of every run.
func TestEscalationQueryUsesIndexes(t *testing.T) {
	d, _ := openTest(t)
	for query, index := range map[string]string{escalationQuery: "events_user_messages", ackQuery: "events_escalation_acks"} {
		rows, err := d.sql.Query(`EXPLAIN QUERY PLAN ` + query + ` ORDER BY run_id, seq`)
		if err != nil {
			t.Fatal(err)
		}
		var plan string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan += detail + "\n"
		}
		rows.Close()
		if !strings.Contains(plan, index) {
			t.Errorf("the plan does not use %s:\n%s", index, plan)
		}
	}
}
