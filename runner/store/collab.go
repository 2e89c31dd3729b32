package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/orch-cli/orch/runner/record"
)

// The projections of agents working together: child tasks (handoffs and
// spawns) become cue rows, questions get a row each from asked to closed,
// and the credits the agents report are kept on the run.

// taskStarted is what a task/started event's projection writes beyond its data.
type taskStarted struct {
	agents  string // JSON array holding the child's agent
	context any    // JSON object, or nil
}

// checkCollab checks the data of the event types of this file and prepares
// their projection (nil payload for any other type).
func checkCollab(ev record.Event) (payload any, err error) {
	switch ev.Type {
	case record.EvTaskStarted:
		return prepareTaskStarted(ev)
	case record.EvFanOut:
		return prepareFanOut(ev)
	case record.EvQuestion:
		if err := needAttempt(ev); err != nil {
			return nil, err
		}
		d, ok := ev.Data.(record.QuestionData)
		switch {
		case !ok:
			err = need(ok, "data")
		case d.ID == "":
			err = errors.New("the question has no id")
		case strings.TrimSpace(d.Question) == "":
			err = fmt.Errorf("question %s has no text", d.ID)
		case d.Complexity != "quick" && d.Complexity != "deep":
			err = fmt.Errorf("question %s: complexity %q is neither quick nor deep", d.ID, d.Complexity)
		case d.To == "":
			err = fmt.Errorf("question %s says nobody it was asked of", d.ID)
		}
		return nil, err
	case record.EvQuestionClosed:
		switch ev.State {
		case record.QuestionAnswered, record.QuestionUnanswered, record.QuestionWithdrawn:
		default:
			return nil, fmt.Errorf("unknown question state %q (want answered, unanswered or withdrawn)", ev.State)
		}
		d, ok := ev.Data.(record.AnswerData)
		if err := need(ok, "data"); err != nil {
			return nil, err
		}
		if d.ID == "" {
			return nil, errors.New("the data names no question (id)")
		}
		return nil, nil
	case record.EvUsage:
		d, ok := ev.Data.(record.UsageData)
		if err := need(ok, "data"); err != nil {
			return nil, err
		}
		if d.RunTotal < 0 || d.Credits < 0 {
			return nil, fmt.Errorf("negative credits (%g, run total %g)", d.Credits, d.RunTotal)
		}
		if d.CostUSD < 0 || d.RunCostUSD < 0 || d.InputTokens < 0 || d.OutputTokens < 0 || d.RunInputTokens < 0 || d.RunOutputTokens < 0 {
			return nil, fmt.Errorf("negative cost or tokens ($%g, %d in, %d out; run $%g, %d in, %d out)",
				d.CostUSD, d.InputTokens, d.OutputTokens, d.RunCostUSD, d.RunInputTokens, d.RunOutputTokens)
		}
		return nil, nil
	case record.EvWorktree:
		d, ok := ev.Data.(record.WorktreeData)
		if err := needAttempt(ev); err != nil {
			return nil, err
		}
		if err := need(ok, "data"); err != nil {
			return nil, err
		}
		if d.Branch == "" {
			return nil, errors.New("the worktree has no branch")
		}
		return nil, nil
	}
	return nil, nil
}

func prepareTaskStarted(ev record.Event) (taskStarted, error) {
	var p taskStarted
	if ev.Cue == "" || ev.Agent == "" {
		return p, fmt.Errorf("a task/started event needs the child's task id (cue) and agent (got %q, %q)", ev.Cue, ev.Agent)
	}
	d, ok := ev.Data.(record.TaskStartedData)
	if err := need(ok, "data"); err != nil {
		return p, err
	}
	switch {
	case d.Parent == "":
		return p, fmt.Errorf("task %s has no parent", ev.Cue)
	case d.Kind != "handoff" && d.Kind != "spawn":
		return p, fmt.Errorf("task %s: kind %q is neither handoff nor spawn", ev.Cue, d.Kind)
	case d.Depth < 1:
		return p, fmt.Errorf("task %s: depth %d (a child is at depth 1 or more)", ev.Cue, d.Depth)
	}
	// A child's id is its parent's, "/", a number: the tree can be read from
	// the ids alone, and a cue id (which cannot hold "/") never collides.
	rest, ok := strings.CutPrefix(ev.Cue, d.Parent+"/")
	if !ok || rest == "" || strings.Contains(rest, "/") {
		return p, fmt.Errorf("task id %q is not its parent's id %q followed by /N", ev.Cue, d.Parent)
	}
	a, _ := json.Marshal([]string{ev.Agent}) // a []string always marshals
	p.agents = string(a)
	p.context = jsonOrNil(d.Context)
	return p, nil
}

// projectCollab applies the event types of this file; ok is false for any
// other type.
func (t *txn) projectCollab(rec *prepared) (ok bool, err error) {
	ev := &rec.ev
	switch ev.Type {
	case record.EvTaskStarted:
		return true, t.projectTaskStarted(rec)
	case record.EvFanOut:
		return true, t.projectFanOut(rec)
	case record.EvQuestion:
		return true, t.projectQuestion(rec)
	case record.EvQuestionClosed:
		return true, t.projectQuestionClosed(rec)
	case record.EvUsage:
		d := ev.Data.(record.UsageData)
		if _, err := t.exec(`UPDATE runs SET credits = ?, cost_usd = ?, input_tokens = ?, output_tokens = ? WHERE id = ?`,
			d.RunTotal, d.RunCostUSD, d.RunInputTokens, d.RunOutputTokens, ev.RunID); err != nil {
			return true, err
		}
		_, err := t.exec(`UPDATE attempts SET credits = ?, cost_usd = ?, input_tokens = ?, output_tokens = ?
			WHERE run_id = ? AND cue_id = ? AND number = ? AND agent_id = ?`,
			d.Credits, d.CostUSD, d.InputTokens, d.OutputTokens, ev.RunID, ev.Cue, ev.Attempt, ev.Agent)
		return true, err
	case record.EvWorktree:
		d := ev.Data.(record.WorktreeData)
		_, err := t.exec(`UPDATE attempts SET worktree_branch = ?, worktree_commit = ?
			WHERE run_id = ? AND cue_id = ? AND number = ? AND agent_id = ?`,
			d.Branch, d.Commit, ev.RunID, ev.Cue, ev.Attempt, ev.Agent)
		return true, err
	}
	return false, nil
}

// projectTaskStarted creates the child's cue row, pending, after every row
// the run has (plan cues first, then children in the order they started).
func (t *txn) projectTaskStarted(rec *prepared) error {
	ev, p, d := &rec.ev, rec.payload.(taskStarted), rec.ev.Data.(record.TaskStartedData)
	res, err := t.exec(`INSERT INTO cues (run_id, cue_id, position, agents, state, parent, kind, depth, task_ref, context)
		SELECT ?, ?, coalesce((SELECT max(position) FROM cues WHERE run_id = ?), -1) + 1, ?, ?, ?, ?, ?, ?, ?
		WHERE EXISTS (SELECT 1 FROM cues WHERE run_id = ? AND cue_id = ?)`,
		ev.RunID, ev.Cue, ev.RunID, p.agents, record.CuePending, d.Parent, d.Kind, d.Depth, d.TaskRef, p.context,
		ev.RunID, d.Parent)
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("run %s already has a task %s", ev.RunID, ev.Cue)
		}
		return err
	}
	if rowsAffected(res) == 0 {
		return fmt.Errorf("run %s has no task %q, the parent of %s", ev.RunID, d.Parent, ev.Cue)
	}
	return nil
}

func (t *txn) projectQuestion(rec *prepared) error {
	ev, q := &rec.ev, rec.ev.Data.(record.QuestionData)
	options := "[]"
	if len(q.Options) > 0 {
		b, _ := json.Marshal(q.Options) // strings only: always marshals
		options = string(b)
	}
	_, err := t.exec(`INSERT INTO questions (run_id, qid, cue_id, agent_id, attempt, question, complexity, asked_to, deadline, asked_at, options)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.RunID, q.ID, ev.Cue, ev.Agent, ev.Attempt, q.Question, q.Complexity, q.To, micros(q.Deadline), rec.at, options)
	switch {
	case err == nil:
		return nil
	case isForeignKeyViolation(err):
		return fmt.Errorf("run %s has no cue %q (the asker of question %s)", ev.RunID, ev.Cue, q.ID)
	case isUniqueViolation(err):
		return fmt.Errorf("run %s already has a question %s", ev.RunID, q.ID)
	}
	return err
}

// projectQuestionClosed closes an open question; closing one that is not
// open is the caller's mistake (two answers to one question, say) and fails.
func (t *txn) projectQuestionClosed(rec *prepared) error {
	ev, a := &rec.ev, rec.ev.Data.(record.AnswerData)
	var answer, by string
	if ev.State == record.QuestionAnswered {
		answer, by = a.Answer, a.By
	}
	res, err := t.exec(`UPDATE questions SET state = ?, answer = ?, answered_by = ?, reason = ?, closed_at = ?
		WHERE run_id = ? AND qid = ? AND state = 'open'`,
		ev.State, answer, by, ev.Reason, rec.at, ev.RunID, a.ID)
	if err != nil || rowsAffected(res) > 0 {
		return err
	}
	var state string
	if err := t.queryRow(`SELECT coalesce((SELECT state FROM questions WHERE run_id = ? AND qid = ?), '')`, ev.RunID, a.ID).Scan(&state); err != nil {
		return err
	}
	if state == "" {
		return fmt.Errorf("run %s has no question %s", ev.RunID, a.ID)
	}
	return fmt.Errorf("question %s of run %s is already %s", a.ID, ev.RunID, state)
}
