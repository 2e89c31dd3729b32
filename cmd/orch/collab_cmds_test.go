//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/orch-cli/orch/runner/store"
)

// cmdWaitFor waits (up to 30 s) for a run in $ORCH_DB to get somewhere, for
// testscripts that act on a run while it runs:
//
//	waitfor question VAR      an open question for the person; its id goes to $VAR
//	waitfor state CUE STATE   the last run's CUE (or child task) is in STATE
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: waitfor question VAR | waitfor state CUE STATE | waitfor output CUE TEXT")
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ok, err := waitedFor(ts, args); err != nil {
			ts.Fatalf("waitfor: %v", err)
		} else if ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Fatalf("waitfor %s: not within 30s", strings.Join(args, " "))
}

func waitedFor(ts *testscript.TestScript, args []string) (bool, error) {
	path := ts.Getenv("ORCH_DB")
	if _, err := os.Stat(path); err != nil {
		return false, nil // no run recorded yet
	}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		return false, err
	}
	defer db.Close()
	ctx := context.Background()
	id, err := db.ResolveRun(ctx, "last")
	if err != nil {
		return false, nil
	}
	r, err := db.Run(ctx, id)
	if err != nil {
		return false, err
	}
	switch args[0] {
	case "question":
		for _, q := range r.Questions {
			if q.State == "open" && q.To == "person" {
				ts.Setenv(args[1], q.ID)
				return true, nil
			}
		}
	case "state":
		if len(args) != 3 {
			return false, fmt.Errorf("usage: waitfor state CUE STATE")
		}
		for _, c := range r.Cues {
			if c.ID == args[1] && string(c.State) == args[2] {
				return true, nil
			}
		}
	case "output": // waitfor output CUE TEXT: CUE wrote the line TEXT
		if len(args) != 3 {
			return false, fmt.Errorf("usage: waitfor output CUE TEXT")
		}
		lines, err := db.Logs(ctx, id, args[1], 0, 0)
		for _, l := range lines {
			if l.Text == args[2] {
				return true, nil
			}
		}
		return false, err
	default:
		return false, fmt.Errorf("unknown condition %q", args[0])
	}
	return false, nil
}

// cmdGone checks that the process whose pid is in FILE no longer runs.
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: gone PIDFILE")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	if err != nil {
		ts.Fatalf("gone: %v", err)
	}
	alive := syscall.Kill(pid, 0) == nil
	if alive != neg {
		ts.Fatalf("gone: process %d alive=%v", pid, alive)
	}
}
