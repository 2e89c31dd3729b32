package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/store"
)

// AnswerRequest answers a question an agent asked the person.
type AnswerRequest struct {
	Run      string
	Question string // its id: q1, q2, ...
	Text     string
	// Wait is how long to wait for the owner to deliver the answer; past
	// it, the answer stays queued.
	Wait time.Duration
	// Unhandled: options the Temporal engine does not take (see Engine).
	Unhandled []string
}

// AnswerResult is an answer given: delivered to the agent, or queued.
type AnswerResult struct {
	Run       string `json:"run"`
	Question  string `json:"question"`
	Delivered bool   `json:"delivered"`
	Message   string `json:"message"`
}

// Answer answers a question of a running run: the answer goes to the run's
// owner through the run database, and the owner delivers it to the agent
// that is waiting. Only a question asked of the person can be answered; one
// with options takes an answer that names one (else nothing is delivered).
func (c *Controller) Answer(ctx context.Context, req AnswerRequest) (*AnswerResult, error) {
	var out *AnswerResult
	err := c.writing(ctx, req.Run, func(db *store.DB, id string) (err error) {
		if t, err := onTemporal(ctx, db, id, "orch answer", req.Unhandled); err != nil || t != nil {
			if err != nil {
				return err
			}
			msg, err := c.handOver(db, id, t, []string{"answer"}, req.Question, req.Text)
			out = &AnswerResult{Run: id, Question: req.Question, Message: msg}
			return err
		}
		out, err = answer(ctx, db, id, req.Question, req.Text, req.Wait)
		return err
	})
	return out, err
}

func answer(ctx context.Context, db *store.DB, id, qid, text string, wait time.Duration) (*AnswerResult, error) {
	if strings.TrimSpace(text) == "" {
		return nil, invalidf("the answer is empty")
	}
	q, err := db.Question(ctx, id, qid)
	if errors.Is(err, store.ErrNoQuestion) {
		return nil, noQuestion(ctx, db, id, qid)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case q.State != store.QuestionOpen:
		return nil, refusedf("question %s of run %s is already %s%s", qid, id, q.State, closedHow(q))
	case q.To != "person":
		return nil, refusedf("question %s of run %s was asked of agent %s, not of you: %s answers it or passes it up to you", qid, id, q.To, q.To)
	}
	// A question with options takes an answer that names one: checked here,
	// where the answer is given (the run checks it again on delivery).
	picked, err := record.PickOption(q.Options, text)
	if err != nil {
		return nil, refusedf("question %s of run %s is still open, nothing was delivered: %v", qid, id, err)
	}
	how := ""
	if picked >= 0 {
		how = " (" + q.Options[picked].Name + ")"
	}
	r, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.State != record.RunRunning {
		return nil, refusedf("run %s is %s: no orch process is running it to deliver the answer to %s (orch resume %s runs its cue %s again, and the question is asked again)",
			id, r.State, q.Agent, id, q.Cue)
	}
	masked := redact.New(os.Environ(), nil).Text(text) // the owner puts the secrets back
	if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "answer", Cue: qid, Arg: masked}); err != nil {
		return nil, err
	}
	out := &AnswerResult{Run: id, Question: qid}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if q, err = db.Question(ctx, id, qid); err != nil {
			return nil, err
		}
		switch {
		case q.State == record.QuestionAnswered:
			out.Delivered = true
			out.Message = fmt.Sprintf("%s answered%s: delivered to %s (cue %s)", qid, how, q.Agent, q.Cue)
			return out, nil
		case q.State != store.QuestionOpen:
			return nil, refusedf("question %s of run %s was %s before the answer reached %s%s", qid, id, q.State, q.Agent, closedHow(q))
		}
	}
	out.Message = fmt.Sprintf("%s: answer queued for run %s (its owner, process %d on %s, has not delivered it yet)", qid, id, r.OwnerPID, r.OwnerHost)
	return out, nil
}

// closedHow says how a closed question was closed, for an error message.
func closedHow(q store.QuestionDetail) string {
	switch {
	case q.State == record.QuestionAnswered && q.By != "":
		return fmt.Sprintf(" (by %s: %q)", q.By, OneLine(q.Answer, 60))
	case q.Reason != "":
		return " (" + q.Reason + ")"
	}
	return ""
}

// noQuestion is the error for a question id the run does not have: it
// names the open ones, which is what the person was looking for.
func noQuestion(ctx context.Context, db *store.DB, id, qid string) error {
	open, err := db.Questions(ctx, id, true)
	if err != nil {
		return err
	}
	if len(open) == 0 {
		return refusedf("run %s has no question %q, and no question is open", id, qid)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run %s has no question %q; open questions:", id, qid)
	for _, q := range open {
		fmt.Fprintf(&b, "\n  %s [%s] %s (%s) asks %s: %s", q.ID, q.Complexity, q.Agent, q.Cue, q.To, OneLine(q.Question, 80))
	}
	return &Error{Kind: Refused, Err: errors.New(b.String())}
}

// AckRequest acknowledges a high or critical escalation.
type AckRequest struct {
	Run string
	ID  string // the escalation's: e42
	By  string // who acknowledges ("": user@host (pid N) of this process)
}

// AckResult is an acknowledgement made, or found made before.
type AckResult struct {
	Run     string `json:"run"`
	ID      string `json:"id"`
	Already bool   `json:"already"` // it had been acknowledged: nothing more was recorded
	Message string `json:"message"`
}

// Ack records that the person acknowledged an escalation (an
// escalation/acknowledged event); acknowledging one twice says so and
// records nothing more. It works on a run in any state.
func (c *Controller) Ack(ctx context.Context, req AckRequest) (*AckResult, error) {
	by := req.By
	if by == "" {
		by = Me()
	}
	var out *AckResult
	err := c.writing(ctx, req.Run, func(db *store.DB, id string) error {
		es, err := db.Escalation(ctx, id, req.ID)
		if errors.Is(err, store.ErrNoEscalation) {
			return noEscalation(ctx, db, id, req.ID)
		}
		if err != nil {
			return err
		}
		if !es.AckedAt.IsZero() {
			out = &AckResult{Run: id, ID: es.ID, Already: true, Message: fmt.Sprintf("%s was already acknowledged by %s", es.ID, es.AckedBy)}
			return nil
		}
		if err := db.Append(ctx, record.Event{RunID: id, Type: record.EvEscalationAcked, Cue: es.Cue, Agent: es.Agent,
			Data: record.EscalationAckedData{ID: es.ID, By: by}}); err != nil {
			return err
		}
		out = &AckResult{Run: id, ID: es.ID, Message: fmt.Sprintf("%s acknowledged: [%s] from %s (%s): %s", es.ID, es.Severity, es.Agent, es.Cue, OneLine(es.Text, 100))}
		return nil
	})
	return out, err
}

// noEscalation is the error for an id the run has no high or critical
// escalation by (Invalid): it names the open ones.
func noEscalation(ctx context.Context, db *store.DB, id, eid string) error {
	open, err := db.Escalations(ctx, id, true)
	if err != nil {
		return err
	}
	if len(open) == 0 {
		return invalidf("run %s has no high or critical escalation %q, and none waits to be acknowledged", id, eid)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run %s has no high or critical escalation %q; not yet acknowledged:", id, eid)
	for _, es := range open {
		fmt.Fprintf(&b, "\n  %s [%s] %s (%s): %s", es.ID, es.Severity, es.Agent, es.Cue, OneLine(es.Text, 80))
	}
	return &Error{Kind: Invalid, Err: errors.New(b.String())}
}

// Me names this process's person: user@host (pid N), as orch retry and
// orch ack record who did it.
func Me() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s (pid %d)", name, host, os.Getpid())
}
