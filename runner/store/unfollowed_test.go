package store

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// TestUnfollowedTemporalRun: a run on Temporal whose follower is gone is
// not interrupted (its workflow goes on): Run, Runs and RunState read it
// running, saying nobody follows it and how to follow it again; a local run
// with the same dead owner is interrupted; a live follower's lease reads
// plainly running.
func TestUnfollowedTemporalRun(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "local1", "a")
	ev := startedEvent(t, "temp1", time.Now().Add(-time.Hour), "a")
	data := ev.Data.(record.RunStartedData)
	data.OwnerToken = "gone" // a follower on another host, its heartbeat long ago
	data.Temporal = &record.TemporalRun{Address: "h:7233", Namespace: "default", TaskQueue: "orch", WorkflowID: "orch-temp1", Path: "deploy.yaml"}
	ev.Data = data
	appendOK(t, d, ev)

	want := "on Temporal (workflow orch-temp1), followed by nobody"
	if r, err := d.Run(ctx, "temp1"); err != nil || r.State != record.RunRunning || !strings.Contains(r.Reason, want) || !strings.Contains(r.Reason, "orch resume temp1 follows it again") {
		t.Errorf("Run(temp1): %v %s: %q", err, r.State, r.Reason)
	}
	if r, err := d.Run(ctx, "local1"); err != nil || r.State != record.RunInterrupted {
		t.Errorf("Run(local1): %v %s", err, r.State)
	}
	runs, _, err := d.Runs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range runs {
		switch s.ID {
		case "temp1":
			if s.State != record.RunRunning || !strings.Contains(s.Reason, want) {
				t.Errorf("Runs: temp1 %s %q", s.State, s.Reason)
			}
		case "local1":
			if s.State != record.RunInterrupted {
				t.Errorf("Runs: local1 %s", s.State)
			}
		}
	}
	if st, err := d.RunState(ctx, "temp1"); err != nil || st != record.RunRunning {
		t.Errorf("RunState(temp1): %v %s", err, st)
	}
	if st, err := d.RunState(ctx, "local1"); err != nil || st != record.RunInterrupted {
		t.Errorf("RunState(local1): %v %s", err, st)
	}

	// A follower takes the lease again (orch resume): plainly running.
	host, _ := os.Hostname()
	if err := d.ClaimRun(ctx, "temp1", record.Owner{PID: os.Getpid(), Host: host, Token: "follower"}); err != nil {
		t.Fatal(err)
	}
	if r, err := d.Run(ctx, "temp1"); err != nil || r.State != record.RunRunning || r.Reason != "" || r.OwnerPID != os.Getpid() {
		t.Errorf("followed: %v %s %q owner %d", err, r.State, r.Reason, r.OwnerPID)
	}
}
