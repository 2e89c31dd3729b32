package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// QuestionOpen is the state of a question nobody has closed yet; the closed
// states are runner.QuestionAnswered, QuestionUnanswered and QuestionWithdrawn.
const QuestionOpen = "open"

// QuestionDetail is one question an agent asked in a run.
type QuestionDetail struct {
	ID         string // q1, q2, ...
	Cue        string // the asker's task: a cue id or a child's id
	Agent      string
	Attempt    int
	Question   string
	Complexity string // quick or deep
	To         string // "person", or the parent agent it was asked of
	State      string // open, answered, unanswered or withdrawn
	Answer     string
	By         string // who answered: "person" or an agent
	Reason     string
	AskedAt    time.Time
	ClosedAt   time.Time               // zero while open
	Deadline   time.Time               // when it becomes unanswered
	Options    []record.QuestionOption // the answers it takes; none: any
}

// ErrNoQuestion is wrapped by Question's error when the run has no question
// with that id.
var ErrNoQuestion = errors.New("no such question")

// Question returns one question of a run.
func (d *DB) Question(ctx context.Context, runID, qid string) (QuestionDetail, error) {
	row := d.sql.QueryRowContext(ctx, questionColumns+` WHERE run_id = ? AND qid = ?`, runID, qid)
	q, err := scanQuestion(row)
	if errors.Is(err, sql.ErrNoRows) {
		return q, fmt.Errorf("run %s: %w %q", runID, ErrNoQuestion, qid)
	}
	if err != nil {
		return q, fmt.Errorf("reading question %s of run %s: %w", qid, runID, d.plain(err))
	}
	return q, nil
}

// Questions returns a run's questions in the order asked; with openOnly,
// those still open.
func (d *DB) Questions(ctx context.Context, runID string, openOnly bool) ([]QuestionDetail, error) {
	qs, err := questions(ctx, d.sql, runID, openOnly)
	if err != nil {
		return nil, fmt.Errorf("reading the questions of run %s: %w", runID, d.plain(err))
	}
	return qs, nil
}

const questionColumns = `SELECT qid, cue_id, agent_id, attempt, question, complexity, asked_to, state,
	answer, answered_by, reason, asked_at, closed_at, deadline, options FROM questions`

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// questions reads a run's questions. Ids are q1, q2, ... q10: ordered by
// when they were asked, not by id, so q10 comes after q9.
func questions(ctx context.Context, db querier, runID string, openOnly bool) ([]QuestionDetail, error) {
	query := questionColumns + ` WHERE run_id = ? ORDER BY asked_at, length(qid), qid`
	if openOnly {
		query = questionColumns + ` WHERE run_id = ? AND state = 'open' ORDER BY asked_at, length(qid), qid`
	}
	rows, err := db.QueryContext(ctx, query, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []QuestionDetail
	for rows.Next() {
		q, err := scanQuestion(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, rows.Err()
}

func scanQuestion(s interface{ Scan(...any) error }) (QuestionDetail, error) {
	var q QuestionDetail
	var asked, closed, deadline sql.NullInt64
	var options string
	err := s.Scan(&q.ID, &q.Cue, &q.Agent, &q.Attempt, &q.Question, &q.Complexity, &q.To, &q.State,
		&q.Answer, &q.By, &q.Reason, &asked, &closed, &deadline, &options)
	q.AskedAt, q.ClosedAt, q.Deadline = fromMicros(asked), fromMicros(closed), fromMicros(deadline)
	if err == nil && options != "[]" {
		err = unmarshalColumn(options, &q.Options, "options")
	}
	return q, err
}
