package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// A run's owner renews its lease every runner.HeartbeatEvery; an owner whose
// heartbeat is older than runner.LeaseTTL, or whose process is gone (on this
// host), is dead, and its run is interrupted.

// alive reports whether a run's recorded owner still holds it.
func alive(pid int, host, token string, heartbeat time.Time) bool {
	if token == "" || time.Since(heartbeat) > record.LeaseTTL {
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
	Owner record.Owner
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
func (d *DB) ClaimRun(ctx context.Context, runID string, owner record.Owner) error {
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
		return &OwnedError{Run: r.runID, Owner: record.Owner{PID: pid, Host: host, Token: token}, Since: hb}
	}
	_, err = t.exec(`UPDATE runs SET owner_pid = ?, owner_host = ?, owner_token = ?, heartbeat_at = ? WHERE id = ?`,
		r.claim.PID, r.claim.Host, r.claim.Token, t.now.UnixMicro(), r.runID)
	if err == nil {
		t.holds(r.runID, r.claim.Token)
	}
	return err
}

// Heartbeat renews ownerToken's lease on the run (runner.Recorder).
func (d *DB) Heartbeat(ctx context.Context, runID, ownerToken string) error {
	r := &request{kind: kindHeartbeat, runID: runID, claim: record.Owner{Token: ownerToken}}
	return d.do(ctx, r)
}

func (t *txn) heartbeat(r *request) error {
	if err := t.fence(r.runID); err != nil {
		return err
	}
	res, err := t.exec(`UPDATE runs SET heartbeat_at = ? WHERE id = ? AND owner_token = ?`, t.now.UnixMicro(), r.runID, r.claim.Token)
	if err != nil {
		return err
	}
	if rowsAffected(res) == 0 {
		owner, err := t.owner(r.runID)
		if err != nil {
			return err
		}
		return &LeaseLostError{Run: r.runID, Owner: owner}
	}
	return nil
}

// LeaseLostError is the error of every write of a run by a process that
// owned it and lost its lease: another process claimed the run (its owner's
// commits stalled past runner.LeaseTTL, and orch resume took the run over),
// or released it. errors.Is(err, runner.ErrLeaseLost) holds.
type LeaseLostError struct {
	Run   string
	Owner record.Owner // the run's owner now; no Token when nobody owns it
}

func (e *LeaseLostError) Error() string {
	if e.Owner.Token == "" {
		return fmt.Sprintf("lease lost: run %s is no longer owned by this process (process %d on %s released it)",
			e.Run, e.Owner.PID, e.Owner.Host)
	}
	return fmt.Sprintf("lease lost: run %s is now owned by %d@%s", e.Run, e.Owner.PID, e.Owner.Host)
}

func (e *LeaseLostError) Unwrap() error { return record.ErrLeaseLost }

// The fence. A handle remembers the runs it owns (it recorded their start
// or claimed them) and the owner's token of each. Every write transaction
// that touches such a run checks, under the write lock, that the run is
// still this token's: so once another process has claimed the run, not one
// more decision of the old owner commits, even one that was queued behind
// the lock while the claim went through. The check reads the runs table
// only when PRAGMA data_version says another connection has written since
// the last check: the usual decision's commit pays a map lookup.

// lease is a run this handle owns.
type lease struct {
	token string
	lost  *LeaseLostError // set once another owner was seen: for good
}

// holds records, for when the transaction commits, that this handle owns
// the run with token ("": it released the run).
func (t *txn) holds(runID, token string) {
	if t.leaseChanges == nil {
		t.leaseChanges = map[string]string{}
	}
	t.leaseChanges[runID] = token
}

// fence returns the error a write of the run gets: a *LeaseLostError when
// this handle owned it and another process took it.
func (t *txn) fence(runID string) error {
	if _, ok := t.leaseChanges[runID]; ok {
		return nil // claimed or released by this very transaction
	}
	if l := t.d.leases[runID]; l != nil && l.lost != nil {
		return l.lost
	}
	return nil
}

// fenceCommand fences the run of command id, when this handle has lost a
// lease (else no run needs a look).
func (t *txn) fenceCommand(id int64) error {
	for _, l := range t.d.leases {
		if l.lost == nil {
			continue
		}
		var runID string
		err := t.queryRow(`SELECT run_id FROM commands WHERE id = ?`, id).Scan(&runID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // commandDone says there is no such command
		}
		if err != nil {
			return err
		}
		return t.fence(runID)
	}
	return nil
}

// checkLeases looks, when another connection has written since the last
// look, whether each run this handle owns still has its token.
func (t *txn) checkLeases() error {
	d := t.d
	if len(d.leases) == 0 || t.dataVersion == d.leaseVersion {
		return nil
	}
	for id, l := range d.leases {
		if l.lost != nil {
			continue
		}
		owner, err := t.owner(id)
		if err != nil {
			return fmt.Errorf("checking the lease of run %s: %w", id, err)
		}
		if owner.Token != l.token {
			l.lost = &LeaseLostError{Run: id, Owner: owner}
		}
	}
	d.leaseVersion = t.dataVersion
	return nil
}

// owner reads the run's owner; a run that is gone has none.
func (t *txn) owner(runID string) (record.Owner, error) {
	var o record.Owner
	err := t.queryRow(`SELECT owner_pid, owner_host, owner_token FROM runs WHERE id = ?`, runID).Scan(&o.PID, &o.Host, &o.Token)
	if errors.Is(err, sql.ErrNoRows) {
		return record.Owner{}, nil
	}
	return o, err
}

// commitLeases applies what a committed transaction changed of the leases.
func (t *txn) commitLeases() {
	d := t.d
	for id, token := range t.leaseChanges {
		if token == "" {
			delete(d.leases, id)
			continue
		}
		if d.leases == nil {
			d.leases = map[string]*lease{}
		}
		d.leases[id] = &lease{token: token}
	}
}
