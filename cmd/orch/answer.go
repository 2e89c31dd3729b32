package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/store"
)

func newAnswerCmd(io *streams) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "answer RUN QID TEXT...",
		Short: "Answer a question an agent asked the person running orch",
		Long: `Answer question QID (q1, q2, ...; orch status RUN lists the open ones) of
a run that is still running: the answer goes to the run's owner through the
run database, and the owner delivers it to the agent that is waiting. The
words of TEXT are joined with spaces.

Only a question asked of the person can be answered here: one asked of an
agent (the parent of the asker) is that agent's to answer or to pass up.

A question with options (an ACP agent's permission request) takes an
answer that names one: its number, id or name, whatever the case, or the
start of one that no other option shares. Any other answer is refused at
once with the options listed (exit 1): nothing is delivered, the question
stays open.

orch answer waits up to --wait for the delivery; if the owner has not
delivered it by then, the answer stays queued and orch answer exits 0.`,
		Example: `  orch answer last q1 yes, use PostgreSQL
  orch answer 3f9a q3 "ship it" --wait 30s
  orch answer last q2 2            # the second option of a permission request
  orch answer last q2 yes          # the option "Yes, proceed"`,
		Args:              argsBetween(3, -1),
		ValidArgsFunction: completeAnswer,
		RunE: func(cmd *cobra.Command, args []string) error {
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, dbFile, id string) error {
				if handled, err := handOverRecorded(cmd, io, db, id, nil, nil, func(flags []string) []string {
					return append(append([]string{"answer"}, flags...), "--", id, args[1], strings.Join(args[2:], " "))
				}); handled {
					return err
				}
				return answer(ctx, io, db, id, args[1], strings.Join(args[2:], " "), wait)
			})
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 10*time.Second, "how long to wait for the answer to be delivered")
	return cmd
}

func answer(ctx context.Context, io *streams, db *store.DB, id, qid, text string, wait time.Duration) error {
	if strings.TrimSpace(text) == "" {
		return usageError(errors.New("the answer is empty"))
	}
	q, err := db.Question(ctx, id, qid)
	if errors.Is(err, store.ErrNoQuestion) {
		return noQuestion(ctx, db, id, qid)
	}
	if err != nil {
		return err
	}
	switch {
	case q.State != store.QuestionOpen:
		return fmt.Errorf("question %s of run %s is already %s%s", qid, id, q.State, closedHow(q))
	case q.To != "person":
		return fmt.Errorf("question %s of run %s was asked of agent %s, not of you: %s answers it or passes it up to you", qid, id, q.To, q.To)
	}
	// A question with options takes an answer that names one: checked here,
	// where the answer is given (the run checks it again on delivery).
	picked, err := record.PickOption(q.Options, text)
	if err != nil {
		return fmt.Errorf("question %s of run %s is still open, nothing was delivered: %v", qid, id, err)
	}
	how := ""
	if picked >= 0 {
		how = " (" + q.Options[picked].Name + ")"
	}
	r, err := db.Run(ctx, id)
	if err != nil {
		return err
	}
	if r.State != record.RunRunning {
		return fmt.Errorf("run %s is %s: no orch process is running it to deliver the answer to %s (orch resume %s runs its cue %s again, and the question is asked again)",
			id, r.State, q.Agent, id, q.Cue)
	}
	masked := redact.New(os.Environ(), nil).Text(text) // the owner puts the secrets back
	if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "answer", Cue: qid, Arg: masked}); err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if q, err = db.Question(ctx, id, qid); err != nil {
			return err
		}
		switch {
		case q.State == record.QuestionAnswered:
			fmt.Fprintf(io.out, "%s answered%s: delivered to %s (cue %s)\n", qid, how, q.Agent, q.Cue)
			return nil
		case q.State != store.QuestionOpen:
			return fmt.Errorf("question %s of run %s was %s before the answer reached %s%s", qid, id, q.State, q.Agent, closedHow(q))
		}
	}
	fmt.Fprintf(io.out, "%s: answer queued for run %s (its owner, process %d on %s, has not delivered it yet)\n", qid, id, r.OwnerPID, r.OwnerHost)
	return nil
}

// closedHow says how a closed question was closed, for an error message.
func closedHow(q store.QuestionDetail) string {
	switch {
	case q.State == record.QuestionAnswered && q.By != "":
		return fmt.Sprintf(" (by %s: %q)", q.By, oneLine(q.Answer, 60))
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
		return fmt.Errorf("run %s has no question %q, and no question is open", id, qid)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run %s has no question %q; open questions:", id, qid)
	for _, q := range open {
		fmt.Fprintf(&b, "\n  %s [%s] %s (%s) asks %s: %s", q.ID, q.Complexity, q.Agent, q.Cue, q.To, oneLine(q.Question, 80))
	}
	return errors.New(b.String())
}

// completeAnswer offers runs for RUN, then the run's open questions asked of
// the person for QID.
func completeAnswer(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) != 1 {
		return completeRuns(cmd, args, toComplete)
	}
	db, err := openReading(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer db.Close()
	id, err := db.ResolveRun(cmd.Context(), args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	open, err := db.Questions(cmd.Context(), id, true)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, q := range open {
		if q.To == "person" {
			out = append(out, fmt.Sprintf("%s\t[%s] %s: %s", q.ID, q.Complexity, q.Agent, oneLine(q.Question, 60)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
