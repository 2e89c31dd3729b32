package driver

import (
	"sync"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
)

// Run is what the agents' processes of a run see of it.
type Run struct {
	ID          string
	Grace       time.Duration // the kill grace
	Sweeper     *proc.Sweeper // every process started is swept
	MessageRate int           // guardrails.message_rate: an agent's messages a second
	Host        RunHost
}

// RunHost is the run's services to its agents' processes; any goroutine
// calls them.
type RunHost interface {
	// Publish records events now and shows them (notes, guard warnings).
	Publish(events ...record.Event) error
	// NewLog budgets the output of an agent's process that no attempt is
	// using (defaults.max_log).
	NewLog() Log
}

// Log is a budget of output lines: Add logs a line, or keeps it for
// Close, which logs what was kept after a line saying what was dropped.
type Log interface {
	Add(l record.LogLine)
	Close(note record.LogLine)
}

// Agents are the processes of a run's agents that serve attempt after
// attempt: a jsonl agent's (agentProcess) and an ACP agent's (acpConn),
// each started at the first WARNING that needs it and kept while it is
// healthy. The run closes them when it ends.
type Agents struct {
	run Run

	mu      sync.Mutex
	procs   map[string]*agentProcess // jsonl agents' healthy processes, by agent
	all     []*agentProcess          // every one started, to wait for at the end
	cascade bool                     // the run is being stopped: see Halt

	acp acpConns
}

// NewAgents makes the agents' processes of a run.
func NewAgents(run Run) *Agents {
	return &Agents{run: run, procs: map[string]*agentProcess{}}
}

// Tell writes a recorded message to the agent's process, if it has a
// healthy one; it is information, so a failure to write is not one.
func (g *Agents) Tell(agent string, msg protocols.Message) {
	g.mu.Lock()
	ap := g.procs[agent]
	g.mu.Unlock()
	if ap != nil && ap.healthy() {
		go func() { _ = ap.write(msg) }()
	}
}

// Halt ends the jsonl agents' processes as the run is stopped (a signal,
// orch stop, a recorder failure): every agent is told (coord.stop) and its
// process group gets SIGTERM at once, SIGKILL after the kill grace. It
// returns once they are gone.
func (g *Agents) Halt() {
	g.mu.Lock()
	g.cascade = true
	g.mu.Unlock()
	g.closeSpeakers()
}

// Close ends every agent process the run started and waits until all are
// gone. When the run ends normally a healthy jsonl agent gets EOF and the
// grace period to exit (see Halt otherwise); an ACP agent, EOF and a
// shorter wait when none of its sessions is open.
func (g *Agents) Close() {
	g.closeSpeakers()
	g.acp.closeAll()
}

// closeSpeakers ends the jsonl agents' processes.
func (g *Agents) closeSpeakers() {
	g.mu.Lock()
	procs := g.all
	g.procs, g.all = map[string]*agentProcess{}, nil
	gentle := !g.cascade
	g.mu.Unlock()
	var wg sync.WaitGroup
	for _, ap := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ap.mu.Lock()
			healthy := ap.broken == nil
			if healthy {
				ap.broken = attempt.Failf("stopped", "the run ended")
				close(ap.done)
			}
			ap.mu.Unlock()
			if healthy && !gentle {
				stop := Encode(protocols.New(protocols.CoordStop{RunID: g.run.ID, Reason: "the run is being stopped"}))
				go func() { _ = ap.w.Send(stop.Msg) }() // never wait on a stuck agent's stdin
			}
			ap.shutdown(healthy && gentle)
		}()
	}
	wg.Wait()
}
