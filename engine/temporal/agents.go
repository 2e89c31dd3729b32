package temporal

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/spec"
)

// pooled reports whether the agent's attempts keep a driver from WARNING to
// GO on its worker: a jsonl agent's process and an ACP agent's connection
// serve attempt after attempt (driver.Agents), and their drivers carry the
// attempt from phase to phase. A plain agent's or a CLI's phase needs
// nothing of the one before.
func pooled(ag *spec.Agent) bool { return ag.Protocol == "jsonl" || ag.Protocol == "acp" }

// poolIdle is how long a worker keeps a run's agent processes while none of
// its phases runs there, at most: they are closed sooner once the run's
// workflow says it needs none of their agents (pool_watch.go); past it they
// are closed anyway (the workflow could not be asked, or the run moved to
// other workers); a later phase starts a fresh process.
var poolIdle = 2 * time.Minute

// runPool is a run's agent processes on this worker, and the attempts whose
// phases ran here, their drivers waiting for the next phase.
type runPool struct {
	id      string
	agents  *driver.Agents
	sweeper *proc.Sweeper
	live    map[string]*liveAttempt // by cue and attempt number
	busy    int                     // phases running now
	idle    *time.Timer
	ran     map[string]bool // the agents whose phases ran here
	link    WorkflowLink    // the run's workflow, as the last phase reached it
	watch   chan struct{}   // closed when a phase starts or the pool closes: ends the idle watch
	closed  bool            // closePool took its attempts: a phase ending later ends its own (putBack)
}

// liveAttempt is an attempt of a pooled agent between its phases on this
// worker.
type liveAttempt struct {
	d      driver.Driver
	at     *driver.Attempt
	host   *stepHost
	next   phase         // the phase it waits for
	work   string        // its OutDir
	ended  chan struct{} // its at.Ended
	detach func()        // ends its MCP registration
	wt     *wtPhase      // its worktree (workspace: worktree), from WARNING to its end
	once   sync.Once
}

// pool returns run id's pool on this worker, counting a phase of agent in
// it.
func (a *Activities) pool(ctx context.Context, p *planner.Plan, id, agent string) *runPool {
	link := a.link(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pools == nil {
		a.pools = map[string]*runPool{}
	}
	rp := a.pools[id]
	if rp == nil {
		sw := proc.NewSweeper(id, func(o proc.Orphan) {
			fmt.Fprintf(os.Stderr, "orch worker: run %s: stopped process %d, left behind by an agent\n", id, o.PID)
		})
		sw.Start()
		rate := p.Cuelist.Guardrails.MessageRate
		if rate <= 0 {
			rate = DefaultMessageRate
		}
		rp = &runPool{id: id, sweeper: sw, live: map[string]*liveAttempt{}, ran: map[string]bool{}}
		rp.agents = driver.NewAgents(driver.Run{ID: id, Grace: attempt.KillGrace(p.Cuelist, 0), Sweeper: sw, MessageRate: rate, Host: newWorkerRunHost(id, p)})
		a.pools[id] = rp
	}
	if rp.idle != nil {
		rp.idle.Stop()
		rp.idle = nil
	}
	rp.endWatch()
	rp.ran[agent] = true
	if link != nil {
		rp.link = link
	}
	rp.busy++
	return rp
}

// DefaultMessageRate is guardrails.message_rate when a cuelist sets none
// (the local runner's default).
const DefaultMessageRate = 100

// release ends a phase in rp; the last one arms the idle close.
func (a *Activities) release(rp *runPool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	rp.busy--
	if rp.busy == 0 {
		rp.idle = time.AfterFunc(poolIdle, func() { a.closeIdle(rp) })
		a.startWatch(rp)
	}
}

func (a *Activities) closeIdle(rp *runPool) {
	a.mu.Lock()
	if rp.busy > 0 || a.pools[rp.id] != rp {
		a.mu.Unlock()
		return
	}
	delete(a.pools, rp.id)
	if rp.idle != nil {
		rp.idle.Stop()
	}
	rp.endWatch()
	a.mu.Unlock()
	a.closePool(rp)
}

// Close ends the agent processes of every run on this worker (the worker
// is stopping).
func (a *Activities) Close() {
	a.mu.Lock()
	pools := a.pools
	a.pools = nil
	a.mu.Unlock()
	for _, rp := range pools {
		if rp.idle != nil {
			rp.idle.Stop()
		}
		rp.endWatch()
		a.closePool(rp)
	}
	a.mcp.close()
}

// closePool ends the attempts waiting in rp and its processes; the caller
// took rp out of a.pools. A phase still running in rp (the worker stopping
// mid-phase) puts its attempt back under a.mu as it ends, so the attempts
// are taken under a.mu too, and rp marked closed: such a phase ends its
// attempt itself (putBack). They are ended outside a.mu (a driver's Close
// waits for its processes).
func (a *Activities) closePool(rp *runPool) {
	a.mu.Lock()
	live := rp.live
	rp.live = map[string]*liveAttempt{}
	rp.closed = true
	a.mu.Unlock()
	for _, la := range live {
		la.end()
	}
	rp.agents.Close()
	rp.sweeper.Stop()
}

// end closes the attempt's driver: it is over, or gone from this worker.
func (la *liveAttempt) end() {
	la.once.Do(func() {
		la.d.Close(la.at)
		la.detach()
		close(la.ended)
		os.RemoveAll(la.work)
		if la.wt != nil {
			la.wt.remove()
		}
	})
}

// stepPooled runs one phase of a pooled agent's attempt. The driver that
// ran the attempt's earlier phases here takes it on; when there is none
// (they ran on another worker, which was lost or is busy; or this worker
// closed the run's processes meanwhile), the earlier phases run again here
// first, on this worker's process of the agent, with a note saying so: an
// agent is always told WARNING and STANDBY before GO.
func (a *Activities) stepPooled(ctx context.Context, p *planner.Plan, c *planner.Cue, ag *spec.Agent, in AttemptInput, ph phase, task *attempt.Task) *AttemptResult {
	rp := a.pool(ctx, p, in.RunID, ag.ID)
	defer a.release(rp)
	key := in.Cue + "/" + strconv.Itoa(in.Attempt)
	a.mu.Lock()
	la := rp.live[key]
	delete(rp.live, key) // this phase's; put back when it waits for the next
	a.mu.Unlock()
	if la != nil && la.next != ph { // a phase run again: start over
		la.end()
		la = nil
	}
	var caught []string
	if la == nil {
		var err error
		if la, err = a.newLive(ctx, rp, p, c, ag, in); err != nil {
			return fail("start", "%v", err)
		}
		for la.next < ph {
			f := la.run(ctx, la.next, nil)
			la.host.End()
			la.host.Bind(ctx, a, in, p)
			if f != nil {
				la.end()
				res := fail(f.Class, "%s (%s again on this worker before %s)", f.Reason, phaseNames[phaseActivity[la.next]], phaseNames[phaseActivity[ph]])
				res.Log = redactLines(p, la.host.tail.take()) // into the history: masked, as every phase's lines
				return res
			}
			caught = append(caught, phaseNames[phaseActivity[la.next]])
			la.next++
		}
		if len(caught) > 0 {
			la.host.Note("%s of attempt %d ran again on this worker first: its agent's process here had not been told", joinAnd(caught), in.Attempt)
		}
	}
	la.host.Bind(ctx, a, in, p)
	if la.wt != nil && ph == phaseGo {
		if f := la.wt.moveTo(ctx, in.Worktree); f != nil {
			la.end()
			return fail(f.Class, "%s", f.Reason)
		}
		task = inWorktree(task, la.wt)
	}
	out, f := la.runWork(ctx, ph, task)
	la.host.End()
	res := &AttemptResult{}
	if f != nil {
		res = fail(f.Class, "%s", f.Reason)
	}
	res.Log = redactLines(p, la.host.tail.take())
	res.Messages, res.MessagesLeftOut = la.host.wire.take(p)
	if f != nil || ph == phaseGo {
		pid, exit := la.d.Close(la.at)
		res.PID, res.ExitCode = pid, exit
		defer la.end() // after its worktree's work is committed
		if f != nil {
			return res
		}
		res.Outputs = out
		if la.wt != nil {
			if res = la.wt.finish(ctx, in, ag, res); res.Failed {
				return res
			}
		}
		if f := attempt.CheckContract(ag, out); f != nil {
			return withFail(res, f.Class, f.Reason)
		}
		return res
	}
	la.next = ph + 1
	a.putBack(rp, key, la)
	return res
}

// putBack keeps la in rp for its next phase. A pool the worker closed
// meanwhile (Activities.Close while this phase ran) is no longer looked at:
// la is ended as closePool would have, not left with its agent's process
// and its work directory.
func (a *Activities) putBack(rp *runPool, key string, la *liveAttempt) {
	a.mu.Lock()
	closed := rp.closed
	if !closed {
		rp.live[key] = la
	}
	a.mu.Unlock()
	if closed {
		la.end()
	}
}

// phaseActivity names each phase's activity.
var phaseActivity = map[phase]string{phaseWarning: ActivityWarning, phaseStandby: ActivityStandby, phaseGo: ActivityGo}

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " and " + s[1]
	}
	return s[0]
}

// newLive makes an attempt's driver on this worker, with the messages orch
// sends its agent at WARNING and STANDBY (coord.go is the driver's, with the
// task).
func (a *Activities) newLive(ctx context.Context, rp *runPool, p *planner.Plan, c *planner.Cue, ag *spec.Agent, in AttemptInput) (*liveAttempt, error) {
	work, err := os.MkdirTemp("", "orch-temporal-"+in.RunID+"-")
	if err != nil {
		return nil, err
	}
	// A worktree agent's attempt works in one worktree from its first phase
	// here to its end, as locally: its process (an ACP session's cwd) is
	// there; GO moves it to the attempt's branch (wtPhase.moveTo).
	c, dir, resolving := a.resolverAt(ctx, in, c, ag)
	var wt *wtPhase
	var wf *attempt.Failure
	if !resolving {
		wt, wf = a.openWorktreeAs(ctx, in, ag, "")
	}
	if wf != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("%s", wf.Reason)
	}
	if wt != nil {
		dir = wt.dir(ag)
	}
	la := &liveAttempt{d: driver.Of(ag).New(), host: newStepHost(agentEnv(ag, in, a)), work: work, wt: wt,
		ended: make(chan struct{})}
	la.host.Bind(ctx, a, in, p)
	cueID := in.Cue
	la.at = &driver.Attempt{RunID: in.RunID, Cue: c, Agent: ag, Number: in.Attempt,
		Token: attemptTokens(in) + record.NewRunID(),
		Dir:   dir, OutDir: work, Timeouts: attempt.TimeoutsOf(p.Cuelist, c, ag, attempt.KillGrace(p.Cuelist, 0)),
		Host: la.host, Agents: rp.agents, Halt: la.host.halts.ch, Abort: la.host.aborts.ch, Ended: la.ended}
	la.detach = a.attachMCP(la.at, la.host)
	if driver.Speaks(ag) {
		la.at.Msgs.Warning = driver.Encode(protocols.New(protocols.CoordWarning{RunID: in.RunID, CueID: cueID, CueGroup: c.Group,
			TargetAgents: c.Agents, PreparationRequired: c.PreparationRequired, Attempt: in.Attempt}))
		la.at.Msgs.Standby = driver.Encode(protocols.New(protocols.CoordStandby{RunID: in.RunID, CueID: cueID, TargetAgents: c.Agents, ReadyCheck: c.ReadyCheck}))
	}
	return la, nil
}

// run runs one phase before GO.
func (la *liveAttempt) run(ctx context.Context, ph phase, task *attempt.Task) *attempt.Failure {
	_, f := la.runWork(ctx, ph, task)
	return f
}

// runWork runs one phase, heartbeating meanwhile; a stop closes the
// attempt's halt (it ends the attempt: no later phase runs).
func (la *liveAttempt) runWork(ctx context.Context, ph phase, task *attempt.Task) (map[string]any, *attempt.Failure) {
	defer beating(ctx, la.host)()
	defer func() { la.host.Record("in", la.at.Msgs.TakeReply()) }() // the agent's answer to the phase
	switch ph {
	case phaseWarning:
		la.host.Record("out", la.at.Msgs.Warning)
		return nil, la.d.Warning(la.at)
	case phaseStandby:
		la.host.Record("out", la.at.Msgs.Standby)
		f := la.d.Standby(la.at)
		if f == nil {
			driver.PrepareGo(la.d, la.at)
		}
		return nil, f
	}
	return la.d.Work(la.at, task) // its coord.go is the driver's to record
}

// workerRunHost is a run's services to its agents' processes on a worker:
// what they say outside any attempt goes to the worker's log (workerOut),
// with the run's secrets masked (d), as everything else it records.
type workerRunHost struct {
	id string
	d  *redact.Redactor
}

func newWorkerRunHost(id string, p *planner.Plan) workerRunHost {
	return workerRunHost{id: id, d: redactorOf(p)}
}

// workerOut is the worker's log.
var workerOut io.Writer = os.Stderr

func (h workerRunHost) Publish(events ...record.Event) error {
	for _, ev := range events {
		fmt.Fprintf(workerOut, "orch worker: run %s: %s %s: %s\n", h.id, ev.Type, ev.Agent, h.d.Text(ev.Reason))
	}
	return nil
}

func (h workerRunHost) NewLog() driver.Log { return workerLog(h) }

// workerLog writes an agent process's lines that no attempt is using it for
// to the worker's log.
type workerLog workerRunHost

func (l workerLog) Add(line record.LogLine) {
	fmt.Fprintf(workerOut, "orch worker: run %s: agent %s: %s\n", l.id, line.Agent, l.d.Text(line.Text))
}

func (l workerLog) Close(record.LogLine) {}
