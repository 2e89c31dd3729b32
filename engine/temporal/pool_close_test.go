package temporal

import (
	"testing"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/proc"
)

// closedDriver is a pooled attempt's driver that only counts its Close.
type closedDriver struct{ closed *int }

func (closedDriver) Warning(*driver.Attempt) *attempt.Failure { return nil }
func (closedDriver) Standby(*driver.Attempt) *attempt.Failure { return nil }
func (closedDriver) Work(*driver.Attempt, *attempt.Task) (map[string]any, *attempt.Failure) {
	return nil, nil
}
func (d closedDriver) Close(*driver.Attempt) (int, *int) { *d.closed++; return 0, nil }

func waitingAttempt(closed *int) *liveAttempt {
	return &liveAttempt{d: closedDriver{closed}, at: &driver.Attempt{}, detach: func() {}, ended: make(chan struct{})}
}

// TestWorkerCloseWhileAPhaseEnds: the worker stops (Activities.Close) while
// a pooled agent's phase ends and puts its attempt back in the run's pool
// for the next phase (stepPooled, under a.mu). Close walked the pool's
// attempts without a.mu: a concurrent map access, which the race detector
// reports (go test -race). The attempt that was waiting is ended.
func TestWorkerCloseWhileAPhaseEnds(t *testing.T) {
	for i := 0; i < 20; i++ {
		a := &Activities{}
		rp := &runPool{id: "r", agents: driver.NewAgents(driver.Run{ID: "r"}), sweeper: proc.NewSweeper("r", func(proc.Orphan) {}),
			live: map[string]*liveAttempt{}, ran: map[string]bool{}}
		rp.sweeper.Start()
		a.pools = map[string]*runPool{rp.id: rp}
		var closedWaiting, closedBack int
		rp.live["A/1"] = waitingAttempt(&closedWaiting)
		phaseEnded := make(chan struct{})
		go func() { // the end of stepPooled
			defer close(phaseEnded)
			a.mu.Lock()
			rp.live["B/1"] = waitingAttempt(&closedBack)
			a.mu.Unlock()
		}()
		a.Close()
		<-phaseEnded
		if closedWaiting != 1 {
			t.Fatalf("the attempt waiting in the pool was closed %d times, want 1", closedWaiting)
		}
	}
}
