package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/store"
)

// temporalRun opens the store and finds where run id's workflow is.
func temporalRun(cmd *cobra.Command, id string) (*store.DB, *record.TemporalRun, client.Client, error) {
	db, _, err := openStore(cmd, ".")
	if err != nil {
		return nil, nil, nil, err
	}
	_, err = db.RunState(context.Background(), id) // a run not in the store says so
	var t *record.TemporalRun
	if err == nil {
		t, err = db.TemporalRun(context.Background(), id)
	}
	if err != nil {
		db.Close()
		return nil, nil, nil, &exitError{code: 2, msg: fmt.Sprintf("run %s: %v", id, err)}
	}
	if t == nil {
		db.Close()
		return nil, nil, nil, &exitError{code: 2, msg: fmt.Sprintf("run %s runs on the local engine: use orch, not orch-temporal", id)}
	}
	if !cmd.Flags().Changed("temporal-address") {
		_ = cmd.Flags().Set("temporal-address", t.Address)
	}
	if !cmd.Flags().Changed("temporal-namespace") {
		_ = cmd.Flags().Set("temporal-namespace", t.Namespace)
	}
	useRecordedConnection(cmd, t)
	c, err := dial(cmd)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	return db, t, c, nil
}

func signalCmd(use, short string, args cobra.PositionalArgs, signal func(args []string) (string, any, error)) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: args, RunE: func(cmd *cobra.Command, args []string) error {
		name, payload, err := signal(args)
		if err != nil {
			return &exitError{code: 2, msg: err.Error()}
		}
		db, t, c, err := temporalRun(cmd, args[0])
		if err != nil {
			return err
		}
		defer db.Close()
		defer c.Close()
		payload = maskedSignal(followerMask(t), payload)
		if err := c.SignalWorkflow(context.Background(), t.WorkflowID, "", name, payload); err != nil {
			return &exitError{code: 1, msg: fmt.Sprintf("run %s: sending %s to workflow %s: %v", args[0], name, t.WorkflowID, err)}
		}
		// Nothing is written to the store here (its seqs are the
		// workflow's): the follower, or orch status (orch-temporal sync),
		// mirrors what the signal did.
		fmt.Fprintf(os.Stderr, "sent %s to run %s: its workflow acts on it now (orch status %s shows it)\n", name, args[0], args[0])
		return nil
	}}
}

func goCmd() *cobra.Command {
	return signalCmd("go RUN CUE", "Give a waiting cue its GO", cobra.ExactArgs(2), func(a []string) (string, any, error) {
		return temporal.SignalGo, temporal.GoSignal{Cue: a[1], By: "orch go"}, nil
	})
}

func stopCmd() *cobra.Command {
	return signalCmd("stop RUN [CUE]", "Stop a run, or one cue and what depends on it", cobra.RangeArgs(1, 2), func(a []string) (string, any, error) {
		s := temporal.StopSignal{By: "orch stop"}
		if len(a) == 2 {
			s.Cue = a[1]
		}
		return temporal.SignalStop, s, nil
	})
}

func answerCmd() *cobra.Command {
	// The workflow takes the answer if the question is open (a note in the
	// run says why not otherwise: an unknown id, an answer none of its
	// options names), and its asker's attempt gets it at once, on whichever
	// worker it runs, followed or not.
	cmd := signalCmd("answer RUN QUESTION ANSWER", "Answer an agent's question", cobra.ExactArgs(3), func(a []string) (string, any, error) {
		if strings.TrimSpace(a[2]) == "" {
			return "", nil, fmt.Errorf("the answer is empty")
		}
		return temporal.SignalAnswer, temporal.AnswerSignal{Question: a[1], Answer: a[2], By: "person"}, nil
	})
	cmd.Example = "  orch answer last q1 'use PostgreSQL'"
	return cmd
}

func notifyModeCmd() *cobra.Command {
	// How children's notices reach their parent agents in the run, or in a
	// cue's subtree: the workflow takes it at once (a note in the run says
	// what changed), followed or not.
	cmd := signalCmd("notify-mode RUN [CUE] MODE", "Set how children's notices reach their parent agents", cobra.RangeArgs(2, 3), func(a []string) (string, any, error) {
		s := temporal.NotifyModeSignal{Mode: a[len(a)-1]}
		if len(a) == 3 {
			s.Cue = a[1]
		}
		switch s.Mode {
		case "immediate", "summary", "silent":
		default:
			return "", nil, fmt.Errorf("unknown mode %q: immediate, summary or silent", s.Mode)
		}
		return temporal.SignalNotifyMode, s, nil
	})
	cmd.Example = "  orch notify-mode last CUE-100 summary"
	return cmd
}

func bbCmd() *cobra.Command {
	bb := &cobra.Command{Use: "bb", Short: "The run's blackboard"}
	bb.AddCommand(signalCmd("set RUN KEY JSON", "Write a blackboard key", cobra.ExactArgs(3), func(a []string) (string, any, error) {
		var v any
		if err := json.Unmarshal([]byte(a[2]), &v); err != nil {
			v = a[2] // a plain word is a string
		}
		return temporal.SignalBBSet, temporal.BBSetSignal{Key: a[1], Value: v, By: "person"}, nil
	}))
	return bb
}

// followCmd is a command that makes this process the follower of a run:
// one at a time, the lease says who (a second would write every event
// twice). followed says what to do when another process follows it.
func followCmd(use, short string, followed func(claimErr error) error, run func(f *follower) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, t, c, err := temporalRun(cmd, args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			defer c.Close()
			host, _ := os.Hostname()
			me := record.Owner{PID: os.Getpid(), Host: host, Token: record.NewRunID() + record.NewRunID()}
			if cmd.Name() == "sync" {
				me.Token = syncToken + me.Token
			}
			if err := claimFollowing(context.Background(), db, args[0], me); err != nil {
				return followed(err)
			}
			return run(&follower{c: c, db: db, id: args[0], wfID: t.WorkflowID, token: me.Token, gitRemote: t.GitRemote, gitRepo: t.GitRepo,
				mask: followerMask(t)})
		}}
}

// followerMask is what a follower masks with: the secrets of this
// process's environment and of the names the run's plan declares.
func followerMask(t *record.TemporalRun) *redact.Redactor { return redact.New(os.Environ(), t.Secrets) }

// maskedSignal is a person's signal with the secrets of what it carries
// masked (an answer, a blackboard value): it goes into the workflow's
// history. The worker of the agent that gets it puts them back, as the
// local engine does with an answer orch answer masked.
func maskedSignal(d *redact.Redactor, payload any) any {
	switch s := payload.(type) {
	case temporal.AnswerSignal:
		s.Answer = d.Text(s.Answer)
		return s
	case temporal.BBSetSignal:
		s.Value = d.Value(s.Value)
		return s
	}
	return payload
}

// syncCmd mirrors what the workflow of a run nobody follows has now into
// the store, once (orch status of a Temporal run calls it): the store is
// current without a follower. A run someone follows is left to them.
func syncCmd() *cobra.Command {
	return followCmd("sync RUN", "Bring a Temporal run's store up to date once, when nobody follows it",
		func(error) error { return nil }, // its follower keeps the store current
		func(f *follower) error {
			ctx, cancel := context.WithTimeout(context.Background(), syncPatience)
			defer cancel()
			f.once = true
			_, _, err := f.follow(ctx)
			return err
		})
}

// syncPatience bounds orch-temporal sync: orch status waits for it.
const syncPatience = 10 * time.Second

func resumeCmd() *cobra.Command {
	return followCmd("resume RUN", "Follow a Temporal run again into the local store",
		func(claimErr error) error {
			return &exitError{code: 1, msg: fmt.Sprintf("%v: it is followed already", claimErr)}
		}, followUntilDone)
}
