//go:build unix

package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// sweeper finds the agents' descendants that outlived their agent's
// process and were reparented to orch, the subreaper: escapees of the
// process group (setsid), with or without an attempt token, and the
// children of any process that exited. It looks every second while the run
// goes on and again and again at its end until none is left, so none
// outlives the run. Looking once a second rather than after every attempt
// keeps /proc reads off each cue's path. With a cgroup per run (see
// runCgroup) an attempt's leftovers are killed when it ends; the sweeper is
// then the second line.
type sweeper struct {
	r      *run
	cgroup *runCgroup // the run's cgroup, nil without
	quit   chan struct{}
	done   chan struct{}
}

// liveTokens are the attempt tokens of attempts running in this process,
// of every run: their processes, and orphans carrying their token, are the
// attempt's to manage. An orphan with no token at all (its environment was
// cleared) cannot be told apart, so it is spared while any attempt runs.
var liveTokens = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

func newSweeper(r *run) *sweeper {
	return &sweeper{r: r, quit: make(chan struct{}), done: make(chan struct{})}
}

// begin marks an attempt's token live before anything with it is started:
// a process carrying it is not an escapee while the attempt runs.
func (s *sweeper) begin(token string) {
	liveTokens.Lock()
	liveTokens.m[token] = true
	liveTokens.Unlock()
}

// end marks the attempt over: whatever still carries its token and is not
// in its (already emptied) process group has escaped.
func (s *sweeper) end(token string) {
	liveTokens.Lock()
	delete(liveTokens.m, token)
	liveTokens.Unlock()
}

// start makes the run's cgroup, if it can, and starts the periodic sweeps.
// It is called before the run starts any agent.
func (s *sweeper) start() {
	s.cgroup = openRunCgroup(s.r.id)
	go s.loop()
}

func (s *sweeper) loop() {
	defer close(s.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.sweep()
		}
	}
}

// stop ends the periodic sweeps and sweeps until nothing is left, sparing
// nothing of this run; then it kills what is left in the run's cgroup and
// removes it.
func (s *sweeper) stop() {
	close(s.quit)
	<-s.done
	liveTokens.Lock()
	for tok := range liveTokens.m {
		if strings.HasPrefix(tok, s.r.id+"/") {
			delete(liveTokens.m, tok)
		}
	}
	liveTokens.Unlock()
	for i := 0; i < 20 && s.sweep(); i++ {
	}
	if pids := s.cgroup.close(); len(pids) > 0 {
		s.note(Event{}, fmt.Sprintf("killed %d process(es) left in the run's cgroup: pids %v", len(pids), pids))
	}
}

// sweep kills the orphans that belong to this run's ended attempts, and
// those without a token when no attempt runs, each with all its
// descendants, and records where each came from. It reports whether it
// found any.
func (s *sweeper) sweep() bool {
	found := orphans()
	if len(found) == 0 {
		return false
	}
	liveTokens.Lock()
	idle := len(liveTokens.m) == 0
	var roots []int
	for pid, token := range found {
		switch {
		case token == "" && idle, strings.HasPrefix(token, s.r.id+"/") && !liveTokens.m[token]:
			roots = append(roots, pid)
		}
	}
	liveTokens.Unlock()
	if len(roots) == 0 {
		return false
	}
	for root, pids := range killTrees(roots) {
		if len(pids) == 0 || pids[0] != root {
			continue // it did not die: say nothing untrue
		}
		what := "killed it"
		if n := len(pids) - 1; n > 0 {
			what = fmt.Sprintf("killed it and its %d descendant(s) %v", n, pids[1:])
		}
		// token: RUN/cue/CUE/ATTEMPT/RANDOM or RUN/agent/AGENT/RANDOM
		parts := strings.Split(found[root], "/")
		var ev Event
		switch {
		case found[root] == "":
			s.note(ev, fmt.Sprintf("process %d, without ORCH_ATTEMPT_TOKEN (its environment cleared), outlived the agent that started it; %s", root, what))
		case len(parts) == 5 && parts[1] == "cue":
			ev.Cue = parts[2]
			s.note(ev, fmt.Sprintf("process %d of attempt %s escaped its process group (setsid); %s", root, parts[3], what))
		case len(parts) == 4 && parts[1] == "agent":
			ev.Agent = parts[2]
			s.note(ev, fmt.Sprintf("process %d of agent %s escaped its process group (setsid); %s", root, parts[2], what))
		default:
			s.note(ev, fmt.Sprintf("process %d escaped its process group (setsid); %s", root, what))
		}
	}
	return true
}

// note records a note of the run (ev gives its cue or agent).
func (s *sweeper) note(ev Event, reason string) {
	ev.RunID, ev.At, ev.Type, ev.Reason = s.r.id, time.Now().UTC(), EvNote, reason
	s.r.publish(context.Background(), ev)
}
