package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
)

// noteOrphan records what the run's sweeper killed: a process that outlived
// the agent that started it, named by its attempt token.
func (r *run) noteOrphan(o proc.Orphan) {
	what := "killed it"
	if n := len(o.Descendants); n > 0 {
		what = fmt.Sprintf("killed it and its %d descendant(s) %v", n, o.Descendants)
	}
	// token: RUN/cue/CUE/ATTEMPT/RANDOM or RUN/agent/AGENT/RANDOM
	parts := strings.Split(o.Token, "/")
	var ev record.Event
	switch {
	case o.Token == "":
		r.sweepNote(ev, fmt.Sprintf("process %d, without ORCH_ATTEMPT_TOKEN (its environment cleared), outlived the agent that started it; %s", o.PID, what))
	case len(parts) == 5 && parts[1] == "cue":
		ev.Cue = parts[2]
		r.sweepNote(ev, fmt.Sprintf("process %d of attempt %s escaped its process group (setsid); %s", o.PID, parts[3], what))
	case len(parts) == 4 && parts[1] == "agent":
		ev.Agent = parts[2]
		r.sweepNote(ev, fmt.Sprintf("process %d of agent %s escaped its process group (setsid); %s", o.PID, parts[2], what))
	default:
		r.sweepNote(ev, fmt.Sprintf("process %d escaped its process group (setsid); %s", o.PID, what))
	}
}

// stopSweeper ends the run's sweeps (see proc.Sweeper.Stop) and records
// what was left in the run's cgroup.
func (r *run) stopSweeper() {
	if pids := r.sweeper.Stop(); len(pids) > 0 {
		r.sweepNote(record.Event{}, fmt.Sprintf("killed %d process(es) left in the run's cgroup: pids %v", len(pids), pids))
	}
}

// sweepNote records a note of the run (ev gives its cue or agent).
func (r *run) sweepNote(ev record.Event, reason string) {
	ev.RunID, ev.At, ev.Type, ev.Reason = r.id, time.Now().UTC(), record.EvNote, reason
	r.publish(context.Background(), ev)
}
