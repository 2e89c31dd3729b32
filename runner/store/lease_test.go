package store

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

func TestClaimAndHeartbeat(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	host, _ := os.Hostname()
	me := record.Owner{PID: os.Getpid(), Host: host, Token: "tok-1"}

	// The recorded owner (pid 42 on another host, heartbeat long ago) is dead.
	if err := d.ClaimRun(ctx, "r1", me); err != nil {
		t.Fatalf("claim of a dead owner's run: %v", err)
	}
	if err := d.Heartbeat(ctx, "r1", "tok-1"); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	if r, _ := d.Run(ctx, "r1"); r.State != record.RunRunning || r.OwnerPID != os.Getpid() {
		t.Errorf("after the claim: %s owner %d", r.State, r.OwnerPID)
	}

	// Two processes claim at once: exactly one wins.
	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := d.Append(ctx, record.Event{RunID: "r1", Type: record.EvRunState, State: string(record.RunPaused)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, db := range []*DB{d, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.ClaimRun(ctx, "r1", record.Owner{PID: os.Getpid(), Host: host, Token: []string{"tok-a", "tok-b"}[i]})
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
	if err := d.Heartbeat(ctx, "r1", "tok-1"); !errors.Is(err, record.ErrLeaseLost) {
		t.Errorf("the first owner's heartbeat = %v, want ErrLeaseLost", err)
	}
}

// TestFencedWriteAfterTakeover: an owner whose commits stall past its lease
// (here another connection holds the write lock) and whose run another
// process claims meanwhile does not commit one more decision: the write it
// had queued behind the lock, and every later one, fails with
// runner.ErrLeaseLost, saying who owns the run now.
func TestFencedWriteAfterTakeover(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	appendOK(t, d, ownedStartedEvent(t, "r1", record.Owner{PID: 41, Host: "a-host", Token: "tok-a"}, "a", "b"))
	appendOK(t, d, record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "warning"})

	// The stall: another connection takes the write lock.
	raw := rawDB(t, path)
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	// The owner's next decision waits for the lock.
	sent := d.stats.sent.Load()
	decided := make(chan error, 1)
	go func() {
		decided <- d.Append(ctx, record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "go"})
	}()
	for d.stats.sent.Load() == sent {
		runtime.Gosched()
	}
	// Meanwhile another process claims the run (what ClaimRun writes) and
	// leaves it a command.
	if _, err := conn.ExecContext(ctx, `UPDATE runs SET owner_pid = 4242, owner_host = 'b-host', owner_token = 'tok-b' WHERE id = 'r1'`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO commands (run_id, kind, cue_id, arg, created_at) VALUES ('r1', 'go', 'b', '', 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}

	err = <-decided
	if !errors.Is(err, record.ErrLeaseLost) {
		t.Fatalf("the stalled owner's decision after the takeover: %v, want ErrLeaseLost", err)
	}
	if want := "lease lost: run r1 is now owned by 4242@b-host"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	var state string
	if err := raw.QueryRowContext(ctx, `SELECT state FROM cues WHERE run_id = 'r1' AND cue_id = 'a'`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "warning" {
		t.Errorf("cue a is %s after the takeover, want warning: the old owner's GO was committed", state)
	}

	// Every later write of the old owner to the run fails the same way.
	cmds, err := d.Commands(ctx, "r1")
	if err != nil || len(cmds) != 1 {
		t.Fatalf("commands: %v %v", cmds, err)
	}
	for what, err := range map[string]error{
		"heartbeat":    d.Heartbeat(ctx, "r1", "tok-a"),
		"append":       d.Append(ctx, record.Event{RunID: "r1", Type: record.EvRunState, State: string(record.RunFailed)}),
		"command done": d.CommandDone(ctx, cmds[0].ID),
		"board": func() error {
			_, err := d.BlackboardWrite(ctx, "r1", "k", []byte(`1`), "x")
			return err
		}(),
	} {
		if !errors.Is(err, record.ErrLeaseLost) {
			t.Errorf("%s after the takeover: %v, want ErrLeaseLost", what, err)
		}
	}
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE run_id = 'r1'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("the run has %d events, want the 2 recorded before the takeover", n)
	}
	// Another run of the same handle is not fenced.
	startRun(t, d, "r2", "a")
}
