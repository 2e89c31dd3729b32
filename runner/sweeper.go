//go:build unix

package runner

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"time"
)

// sweeper finds agent descendants that escaped their process group (setsid)
// and were reparented to orch: every second while the run goes on, and once
// more at its end, so none outlives the run. Looking once per run rather
// than after every attempt keeps /proc reads off each cue's path.
type sweeper struct {
	r    *run
	mu   sync.Mutex
	live map[string]bool // tokens of attempts still running: their processes are theirs to manage
	quit chan struct{}
	done chan struct{}
}

func newSweeper(r *run) *sweeper {
	return &sweeper{r: r, live: map[string]bool{}, quit: make(chan struct{}), done: make(chan struct{})}
}

// begin marks an attempt's token live before anything with it is started:
// a process carrying it is not an escapee while the attempt runs.
func (s *sweeper) begin(token string) {
	s.mu.Lock()
	s.live[token] = true
	s.mu.Unlock()
}

// end marks the attempt over: whatever still carries its token and is not
// in its (already emptied) process group has escaped.
func (s *sweeper) end(token string) {
	s.mu.Lock()
	delete(s.live, token)
	s.mu.Unlock()
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

// stop ends the periodic sweeps and sweeps a last time, sparing nothing.
func (s *sweeper) stop() {
	close(s.quit)
	<-s.done
	s.mu.Lock()
	clear(s.live)
	s.mu.Unlock()
	s.sweep()
}

// sweep kills every escaped descendant of this run's ended attempts and
// records which attempt it came from.
func (s *sweeper) sweep() {
	found := escapees(s.r.id+"/", func(token string) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.live[token]
	})
	if len(found) == 0 {
		return
	}
	pids := make([]int, 0, len(found))
	for pid, token := range found {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		pids = append(pids, pid)
		// token: RUN/cue/CUE/ATTEMPT/RANDOM or RUN/agent/AGENT/RANDOM
		parts := strings.Split(token, "/")
		ev := Event{RunID: s.r.id, At: time.Now().UTC(), Type: EvNote}
		switch {
		case len(parts) == 5 && parts[1] == "cue":
			ev.Cue = parts[2]
			ev.Reason = "process " + itoaPID(pid) + " of attempt " + parts[3] + " escaped its process group (setsid); killed it"
		case len(parts) == 4 && parts[1] == "agent":
			ev.Agent = parts[2]
			ev.Reason = "process " + itoaPID(pid) + " of agent " + parts[2] + " escaped its process group (setsid); killed it"
		default:
			ev.Reason = "process " + itoaPID(pid) + " escaped its process group (setsid); killed it"
		}
		s.r.publish(context.Background(), ev)
	}
	reapOrphans(pids)
}

func itoaPID(pid int) string {
	if pid < 10 {
		return string(rune('0' + pid))
	}
	return itoaPID(pid/10) + string(rune('0'+pid%10))
}
