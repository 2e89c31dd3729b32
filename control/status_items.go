package control

import (
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// Items is a fan-out's items (a cue with for_each) in a RunStatus: their
// ids in item order and how many are in each state.
type Items struct {
	Count     int            `json:"count"`
	Completed int            `json:"completed"`
	Failed    int            `json:"failed"`
	Stopped   int            `json:"stopped"` // stopped (orch stop, or another item failed under on_failure: fast)
	Running   int            `json:"running"` // in WARNING, STANDBY or GO
	Pending   int            `json:"pending"` // not started, or waiting for a GO (interrupted)
	States    map[string]int `json:"states"`
	IDs       []string       `json:"ids"`
}

// FanOuts counts the items of each fan-out of the run, by its cue id.
func FanOuts(cues []store.CueDetail) map[string]*Items {
	out := map[string]*Items{}
	for i := range cues {
		c := &cues[i]
		if c.Kind != "item" {
			continue
		}
		f := out[c.Parent]
		if f == nil {
			f = &Items{States: map[string]int{}}
			out[c.Parent] = f
		}
		f.Count++
		f.IDs = append(f.IDs, c.ID)
		f.States[string(c.State)]++
		switch {
		case c.State == record.CueCompleted:
			f.Completed++
		case c.State == record.CueStopped:
			f.Stopped++
		case c.State.Final():
			f.Failed++
		case c.State == record.CueWarning || c.State == record.CueStandby || c.State == record.CueGo:
			f.Running++
		default:
			f.Pending++
		}
	}
	return out
}

// Question is one question of a RunStatus.
type Question struct {
	ID         string  `json:"id"`
	Cue        string  `json:"cue"`
	Agent      string  `json:"agent"`
	Attempt    int     `json:"attempt"`
	Question   string  `json:"question"`
	Complexity string  `json:"complexity"`
	To         string  `json:"to"`
	State      string  `json:"state"`
	Answer     string  `json:"answer,omitempty"`
	By         string  `json:"by,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	AskedAt    *string `json:"asked_at"`
	ClosedAt   *string `json:"closed_at"`
	Deadline   *string `json:"deadline"`
	// Options are the answers it takes ({id, name, kind}); none: any.
	Options []record.QuestionOption `json:"options,omitempty"`
}

func questionsOf(qs []store.QuestionDetail) []Question {
	out := make([]Question, 0, len(qs))
	for _, q := range qs {
		out = append(out, Question{ID: q.ID, Cue: q.Cue, Agent: q.Agent, Attempt: q.Attempt, Question: q.Question,
			Complexity: q.Complexity, To: q.To, State: q.State, Answer: q.Answer, By: q.By, Reason: q.Reason,
			AskedAt: timeJSON(q.AskedAt), ClosedAt: timeJSON(q.ClosedAt), Deadline: timeJSON(q.Deadline), Options: q.Options})
	}
	return out
}

// Escalation is one high or critical escalation of a RunStatus.
type Escalation struct {
	ID             string  `json:"id"`
	Cue            string  `json:"cue"`
	Agent          string  `json:"agent"`
	Severity       string  `json:"severity"`
	Text           string  `json:"text"`
	At             *string `json:"at"`
	AcknowledgedAt *string `json:"acknowledged_at"`
	AcknowledgedBy string  `json:"acknowledged_by,omitempty"`
}

func escalationsOf(list []store.Escalation) []Escalation {
	out := make([]Escalation, 0, len(list))
	for _, es := range list {
		out = append(out, Escalation{ID: es.ID, Cue: es.Cue, Agent: es.Agent, Severity: es.Severity, Text: es.Text,
			At: timeJSON(es.At), AcknowledgedAt: timeJSON(es.AckedAt), AcknowledgedBy: es.AckedBy})
	}
	return out
}
