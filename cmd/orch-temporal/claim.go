package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// syncToken starts the lease token of orch-temporal sync, which holds a run
// for a moment (orch status, events, serve catching it up): a follower that
// finds the run held by one waits for it rather than call the run followed.
const syncToken = "sync-"

// claimFollowing claims run id's lease for me; a lease held by a sync is
// waited for (syncPatience at most, a sync's own bound), a follower's is
// the error it is.
func claimFollowing(ctx context.Context, db *store.DB, id string, me record.Owner) error {
	deadline := time.Now().Add(syncPatience + time.Second)
	for {
		err := db.ClaimRun(ctx, id, me)
		var owned *store.OwnedError
		if err == nil || !errors.As(err, &owned) || !strings.HasPrefix(owned.Owner.Token, syncToken) || strings.HasPrefix(me.Token, syncToken) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}
