//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// fixtureMain is the orch-fixture program of the testscripts: it builds run
// database states through the store API, and stands in for a run's owner,
// so that commands such as orch answer and orch status can be tested before
// (and apart from) a real run producing those states.
//
//	orch-fixture events FILE          append the events of FILE (JSON lines of record.Event)
//	orch-fixture memory FILE          write the memory items of FILE (JSON lines of record.MemoryItem)
//	orch-fixture own RUN [-answer] [-for D]
//	                                  own RUN (lease and heartbeat) until killed or D passes; with
//	                                  -answer, deliver the answer commands as the runner does
//	orch-fixture wait-running RUN     wait until RUN reads as running (its owner is alive)
//
// The database is $ORCH_DB.
func fixtureMain(args []string) int {
	if err := fixture(args); err != nil {
		fmt.Fprintf(os.Stderr, "orch-fixture: %v\n", err)
		return 1
	}
	return 0
}

func fixture(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: orch-fixture events|memory|own|wait-running ARG")
	}
	db, err := store.Open(os.Getenv("ORCH_DB"), store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "events":
		return eachLine(args[1], func(line []byte) error {
			var ev record.Event
			if err := json.Unmarshal(line, &ev); err != nil {
				return err
			}
			return db.Append(ctx, ev)
		})
	case "memory":
		return eachLine(args[1], func(line []byte) error {
			var it record.MemoryItem
			if err := json.Unmarshal(line, &it); err != nil {
				return err
			}
			return db.MemoryWrite(ctx, it)
		})
	case "own":
		fs := flag.NewFlagSet("own", flag.ContinueOnError)
		deliver := fs.Bool("answer", false, "deliver answer commands")
		dur := fs.Duration("for", time.Minute, "how long to own the run")
		if err := fs.Parse(args[2:]); err != nil {
			return err
		}
		return own(ctx, db, args[1], *deliver, *dur)
	case "wait-running":
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if s, err := db.RunState(ctx, args[1]); err == nil && s == record.RunRunning {
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return fmt.Errorf("run %s is not running after 10s", args[1])
	}
	return fmt.Errorf("unknown mode %q", args[0])
}

func eachLine(path string, f func([]byte) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := f(sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// own holds the run's lease as an owner does, and answers its questions'
// answer commands as the runner does: the question is closed, answered by
// the person, and the command done; a go command sends the cue's GO.
func own(ctx context.Context, db *store.DB, runID string, deliver bool, dur time.Duration) error {
	host, _ := os.Hostname()
	token := fmt.Sprintf("fixture-%d", os.Getpid())
	if err := db.ClaimRun(ctx, runID, record.Owner{PID: os.Getpid(), Host: host, Token: token}); err != nil {
		return err
	}
	end := time.After(dur)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-end:
			return nil
		case <-tick.C:
		}
		if time.Since(last) > record.HeartbeatEvery/2 {
			if err := db.Heartbeat(ctx, runID, token); err != nil {
				return err
			}
			last = time.Now()
		}
		if !deliver {
			continue
		}
		cmds, err := db.Commands(ctx, runID)
		if err != nil {
			return err
		}
		for _, c := range cmds {
			if c.Kind == "go" { // GO sent at once
				if err := db.Append(ctx, record.Event{RunID: runID, Type: record.EvCueState, Cue: c.Cue, State: string(record.CueGo)}); err != nil {
					return err
				}
				if err := db.CommandDone(ctx, c.ID); err != nil {
					return err
				}
				continue
			}
			if c.Kind != "answer" {
				continue
			}
			if q, err := db.Question(ctx, runID, c.Cue); err == nil && q.State == store.QuestionOpen {
				data := record.AnswerData{ID: c.Cue, Answer: c.Arg, By: "person"}
				err := db.Append(ctx, record.Event{RunID: runID, Type: record.EvQuestionClosed, Cue: q.Cue, Agent: q.Agent,
					Attempt: q.Attempt, State: record.QuestionAnswered, Data: data})
				if err != nil {
					return err
				}
			}
			if err := db.CommandDone(ctx, c.ID); err != nil {
				return err
			}
		}
	}
}
