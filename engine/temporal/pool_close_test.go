package temporal

import (
	"os"
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
		a, rp := workerWithAPool()
		var closedWaiting, closedBack int
		rp.live["A/1"] = waitingAttempt(&closedWaiting)
		back := waitingAttempt(&closedBack)
		phaseEnded := make(chan struct{})
		go func() { // the end of stepPooled
			defer close(phaseEnded)
			a.putBack(rp, "B/1", back)
		}()
		a.Close()
		<-phaseEnded
		if closedWaiting != 1 {
			t.Fatalf("the attempt waiting in the pool was closed %d times, want 1", closedWaiting)
		}
		// Put back before Close took the pool's attempts, or after: ended
		// either way, once.
		if closedBack != 1 {
			t.Fatalf("round %d: the attempt put back as the worker closed was closed %d times, want 1", i, closedBack)
		}
	}
}

// TestPhaseEndingAfterCloseEndsItsAttempt: a pooled agent's phase that
// ends after the worker closed its run's pool puts its attempt back into a
// pool nobody looks at any more: the attempt is ended then (its driver
// closed, its work directory removed), as Close ends those it found.
func TestPhaseEndingAfterCloseEndsItsAttempt(t *testing.T) {
	a, rp := workerWithAPool()
	var closed int
	back := waitingAttempt(&closed)
	back.work = t.TempDir()
	a.Close()
	a.putBack(rp, "B/1", back)
	if closed != 1 {
		t.Fatalf("the attempt put back after Close was closed %d times, want 1", closed)
	}
	select {
	case <-back.ended:
	default:
		t.Fatal("the attempt put back after Close was not ended")
	}
	if _, err := os.Stat(back.work); !os.IsNotExist(err) {
		t.Fatalf("its work directory is still there (%v)", err)
	}
}

// workerWithAPool is a worker with one run's pool, as a phase of a pooled
// agent left it.
func workerWithAPool() (*Activities, *runPool) {
	a := &Activities{}
	rp := &runPool{id: "r", agents: driver.NewAgents(driver.Run{ID: "r"}), sweeper: proc.NewSweeper("r", func(proc.Orphan) {}),
		live: map[string]*liveAttempt{}, ran: map[string]bool{}}
	rp.sweeper.Start()
	a.pools = map[string]*runPool{rp.id: rp}
	return a, rp
}
