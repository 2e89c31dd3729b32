package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// leaseKeeper renews a follower's lease on its run beside the follower's
// queries: a query may block longer than the lease lives (a huge plan's
// first workflow task, no worker polling for a while), and a lease left to
// lapse lets a status catch-up take the run, after which the follower ends
// "lease lost" though nothing was wrong.
type leaseKeeper struct {
	on   atomic.Bool // renew: the run is running as far as the follower mirrored
	lost atomic.Pointer[error]
	stop chan struct{}
	done chan struct{}
}

// keepLease starts renewing f's lease every record.HeartbeatEvery while
// on (renew changes it); the first renewal that fails stops it, and
// failure returns its error. close stops it and waits for it.
func (f *follower) keepLease(ctx context.Context, on bool) *leaseKeeper {
	k := &leaseKeeper{stop: make(chan struct{}), done: make(chan struct{})}
	k.on.Store(on)
	go func() {
		defer close(k.done)
		tick := time.NewTicker(record.HeartbeatEvery)
		defer tick.Stop()
		for {
			select {
			case <-k.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if !k.on.Load() {
				continue
			}
			if err := f.db.Heartbeat(ctx, f.id, f.token); err != nil {
				k.lost.Store(&err)
				return
			}
		}
	}()
	return k
}

func (k *leaseKeeper) renew(on bool) { k.on.Store(on) }

func (k *leaseKeeper) failure() error {
	if err := k.lost.Load(); err != nil {
		return *err
	}
	return nil
}

func (k *leaseKeeper) close() {
	close(k.stop)
	<-k.done
}

// leaseFailed is the follower's error when renewing its lease failed.
func (f *follower) leaseFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("following run %s: %w", f.id, err)
}
