package temporal

import (
	"context"
	"slices"
	"sort"
	"time"
)

// A run's jsonl and ACP processes on a worker (agents.go) are closed as
// soon as the run no longer needs them: once none of its phases runs on the
// worker, the worker asks the run's workflow (QueryNeeds) whether any of
// their agents may still get a phase, a moment after the last phase ended
// and then less and less often. The run ended, or none of those agents has
// a cue left: the processes are closed. A phase that comes meanwhile (the
// agent's next cue, a retry) ends the watch and keeps them; poolIdle stays
// the safety net when the workflow cannot be asked.

// poolCheck is how long after a run's last phase on this worker ended the
// worker first asks; each next question waits twice as long, up to
// poolCheckMax.
var (
	poolCheck    = 500 * time.Millisecond
	poolCheckMax = 15 * time.Second
)

// needsTimeout bounds one question to the workflow.
const needsTimeout = 10 * time.Second

// startWatch starts watching an idle pool (a.mu held).
func (a *Activities) startWatch(rp *runPool) {
	if rp.link == nil {
		return
	}
	rp.watch = make(chan struct{})
	agents := make([]string, 0, len(rp.ran))
	for id := range rp.ran {
		agents = append(agents, id)
	}
	sort.Strings(agents)
	// The intervals are read here, under a.mu, not in the goroutine: a
	// test that sets them for a while orders its writes with a.mu
	// (Activities.Close) and not with a goroutine still going.
	go a.watchIdle(rp, rp.watch, rp.link, agents, poolCheck, poolCheckMax)
}

// endWatch ends the idle watch, if any (a.mu held).
func (rp *runPool) endWatch() {
	if rp.watch != nil {
		close(rp.watch)
		rp.watch = nil
	}
}

func (a *Activities) watchIdle(rp *runPool, done <-chan struct{}, link WorkflowLink, agents []string, wait, most time.Duration) {
	for {
		t := time.NewTimer(wait)
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C:
		}
		if !needed(link, agents) {
			a.closeUnneeded(rp, done)
			return
		}
		wait = min(2*wait, most)
	}
}

// needed reports whether the run may still need one of the agents: true
// when the workflow cannot say.
func needed(link WorkflowLink, agents []string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), needsTimeout)
	defer cancel()
	var n Needs
	if err := link.Query(ctx, QueryNeeds, agents, &n); err != nil {
		return true
	}
	return !n.Ended && slices.ContainsFunc(agents, func(id string) bool { return slices.Contains(n.Agents, id) })
}

// closeUnneeded closes an idle pool the workflow needs no more, unless a
// phase came meanwhile (it ended the watch).
func (a *Activities) closeUnneeded(rp *runPool, done <-chan struct{}) {
	a.mu.Lock()
	current := rp.watch == done
	a.mu.Unlock()
	if current {
		a.closeIdle(rp)
	}
}
