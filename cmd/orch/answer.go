package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
)

type answerOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run, qid   string
	text       string // the words of TEXT, joined with spaces
	wait       time.Duration
	unhandled  []string // flags orch-temporal does not take
}

func newAnswerCmd(f *factory, runF func(*answerOptions) error) *cobra.Command {
	opts := &answerOptions{io: f.io, controller: f.Controller}
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
		ValidArgsFunction: completeRunThen(f, completeQuestions),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run, opts.qid, opts.text = args[0], args[1], strings.Join(args[2:], " ")
			opts.unhandled = unhandledFlags(cmd.Flags())
			if runF != nil {
				return runF(opts)
			}
			return answerRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.wait, "wait", 10*time.Second, "how long to wait for the answer to be delivered")
	return cmd
}

func answerRun(ctx context.Context, opts *answerOptions) error {
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	res, err := ctl.Answer(ctx, control.AnswerRequest{Run: opts.run, Question: opts.qid, Text: opts.text, Wait: opts.wait, Unhandled: opts.unhandled})
	if err != nil {
		return err
	}
	printMessage(opts.io, res.Message)
	return nil
}

// printMessage prints an action's message (none when orch-temporal, handed
// the action, printed its own).
func printMessage(io *streams, msg string) {
	if msg != "" {
		fmt.Fprintln(io.out, msg)
	}
}
