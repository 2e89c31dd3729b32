package main

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestResumeWaitsForASync: orch-temporal resume of a run a sync (orch
// status catching it up) holds for a moment waits for it and follows the
// run; a run another follower holds is refused, and a second sync
// leaves it to the first. Before, resume failed with "it is followed
// already" whenever orch status or orch serve caught the run up meanwhile.
func TestResumeWaitsForASync(t *testing.T) {
	db, _ := temporalStore(t, "r1", "tok")
	ctx := context.Background()
	host, _ := os.Hostname()
	// The sync: this process (alive), its lease just taken.
	syncer := record.Owner{PID: os.Getpid(), Host: host, Token: syncToken + "abc"}
	if err := db.ClaimRun(ctx, "r1", syncer); err != nil {
		t.Fatal(err)
	}
	// Another sync does not wait: the run is being caught up.
	var owned *store.OwnedError
	if err := claimFollowing(ctx, db, "r1", record.Owner{PID: os.Getpid(), Host: host, Token: syncToken + "def"}); !errors.As(err, &owned) {
		t.Fatalf("a second sync: %v, want the run owned", err)
	}
	// The sync ends (its process gone: here, its lease handed to a dead pid).
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = db.ClaimRun(ctx, "r1", record.Owner{PID: deadPID(t), Host: host, Token: syncToken + "abc"})
	}()
	follower := record.Owner{PID: os.Getpid(), Host: host, Token: "follower"}
	if err := claimFollowing(ctx, db, "r1", follower); err != nil {
		t.Fatalf("resume while a sync held the run: %v", err)
	}
	// Held by a follower: refused.
	if err := claimFollowing(ctx, db, "r1", record.Owner{PID: os.Getpid(), Host: host, Token: "other"}); !errors.As(err, &owned) || owned.Owner.Token != "follower" {
		t.Fatalf("a second follower: %v, want the run owned by the first", err)
	}
}

// deadPID is the pid of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}
