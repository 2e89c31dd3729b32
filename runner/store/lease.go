package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/orch-cli/orch/runner"
)

// A run's owner renews its lease every runner.HeartbeatEvery; an owner whose
// heartbeat is older than runner.LeaseTTL, or whose process is gone (on this
// host), is dead, and its run is interrupted.

// alive reports whether a run's recorded owner still holds it.
func alive(pid int, host, token string, heartbeat time.Time) bool {
	if token == "" || time.Since(heartbeat) > runner.LeaseTTL {
		return false
	}
	if me, _ := os.Hostname(); host == me {
		return pid > 0 && processExists(pid)
	}
	return true
}

// ErrOwned is returned by ClaimRun when a live process owns the run.
var ErrOwned = errors.New("run is owned by a live process")

// OwnedError says which process owns a run another one tried to claim.
type OwnedError struct {
	Run   string
	Owner runner.Owner
	Since time.Time // its last heartbeat
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("run %s is being run by process %d on %s (last heartbeat %s ago)",
		e.Run, e.Owner.PID, e.Owner.Host, time.Since(e.Since).Round(time.Millisecond))
}

func (e *OwnedError) Unwrap() error { return ErrOwned }

// ClaimRun makes owner the run's owner, if its recorded owner is dead or
// released it (a paused or ended run). The check and the claim are one write
// transaction, so of two processes claiming at once exactly one succeeds; the
// other gets an *OwnedError.
func (d *DB) ClaimRun(ctx context.Context, runID string, owner runner.Owner) error {
	r := &request{kind: kindClaim, claim: owner, runID: runID}
	if err := d.do(ctx, r); err != nil {
		var owned *OwnedError
		if errors.As(err, &owned) {
			return err
		}
		return fmt.Errorf("claiming run %s: %w", runID, err)
	}
	return nil
}

func (t *txn) claim(r *request) error {
	var pid int
	var host, token string
	var heartbeat sql.NullInt64
	err := t.queryRow(`SELECT owner_pid, owner_host, owner_token, heartbeat_at FROM runs WHERE id = ?`, r.runID).
		Scan(&pid, &host, &token, &heartbeat)
	if errors.Is(err, sql.ErrNoRows) {
		return &NotFoundError{Ref: r.runID}
	}
	if err != nil {
		return err
	}
	if hb := fromMicros(heartbeat); token != r.claim.Token && alive(pid, host, token, hb) {
		return &OwnedError{Run: r.runID, Owner: runner.Owner{PID: pid, Host: host, Token: token}, Since: hb}
	}
	_, err = t.exec(`UPDATE runs SET owner_pid = ?, owner_host = ?, owner_token = ?, heartbeat_at = ? WHERE id = ?`,
		r.claim.PID, r.claim.Host, r.claim.Token, t.now.UnixMicro(), r.runID)
	return err
}

// Heartbeat renews ownerToken's lease on the run (runner.Recorder).
func (d *DB) Heartbeat(ctx context.Context, runID, ownerToken string) error {
	r := &request{kind: kindHeartbeat, runID: runID, claim: runner.Owner{Token: ownerToken}}
	return d.do(ctx, r)
}

func (t *txn) heartbeat(r *request) error {
	res, err := t.exec(`UPDATE runs SET heartbeat_at = ? WHERE id = ? AND owner_token = ?`, t.now.UnixMicro(), r.runID, r.claim.Token)
	if err != nil {
		return err
	}
	if rowsAffected(res) == 0 {
		return runner.ErrLeaseLost
	}
	return nil
}
