package store

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/orch-cli/orch/runner"
)

func TestClaimAndHeartbeat(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	host, _ := os.Hostname()
	me := runner.Owner{PID: os.Getpid(), Host: host, Token: "tok-1"}

	// The recorded owner (pid 42 on another host, heartbeat long ago) is dead.
	if err := d.ClaimRun(ctx, "r1", me); err != nil {
		t.Fatalf("claim of a dead owner's run: %v", err)
	}
	if err := d.Heartbeat(ctx, "r1", "tok-1"); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	if r, _ := d.Run(ctx, "r1"); r.State != runner.RunRunning || r.OwnerPID != os.Getpid() {
		t.Errorf("after the claim: %s owner %d", r.State, r.OwnerPID)
	}

	// Two processes claim at once: exactly one wins.
	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := d.Append(ctx, runner.Event{RunID: "r1", Type: runner.EvRunState, State: string(runner.RunPaused)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, db := range []*DB{d, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.ClaimRun(ctx, "r1", runner.Owner{PID: os.Getpid(), Host: host, Token: []string{"tok-a", "tok-b"}[i]})
		}()
	}
	wg.Wait()
	var owned *OwnedError
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case errors.As(err, &owned):
		default:
			t.Errorf("claim: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d claims won, want exactly 1 (%v)", won, errs)
	}
	if err := d.Heartbeat(ctx, "r1", "tok-1"); !errors.Is(err, runner.ErrLeaseLost) {
		t.Errorf("the first owner's heartbeat = %v, want ErrLeaseLost", err)
	}
}
