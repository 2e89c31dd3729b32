package temporal

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// Handoffs and spawns through the workflow: an attempt's task.handoff or
// task.spawn (or the MCP tools) is an update, orch.child, that the workflow
// checks against the task tree (sched.Tasks, the local engine's: depth,
// cycles, inherited inputs), records (task/started) and runs as a child
// task: its agent through WARNING, STANDBY and GO at once, one activity
// each on the agent's queue, with the agent's retries as the core decides
// them (sched.Core.ChildEnded). A child takes no GO slot and no lock, ends
// with the attempt that started it (its activities' context is that
// attempt's), and tells it how it ended: a handoff's update answers with
// the result (handoff.result), a spawn's answers at once (spawn.accepted)
// and the child's end goes to the parent's inbox (task.announce).
const UpdateChild = "orch.child"

// changeChildren: the workflow runs children (only a run whose agents hand
// off or spawn reaches it).
const changeChildren = "orch-children"

// ChildAsk is a task.handoff or task.spawn the worker has checked against
// the sender's spec.
type ChildAsk struct {
	Asker
	Kind    string // "handoff" or "spawn"
	To      string
	TaskRef string         // a handoff's task_id
	Context map[string]any `json:",omitempty"` // a handoff's handoff_context
	Inputs  map[string]any `json:",omitempty"` // a spawn's inputs
}

// ChildDone answers a ChildAsk: refused with the reason, or the child's
// task id and (a handoff's, once it ended) how it ended.
type ChildDone struct {
	TaskID  string
	Refused string         `json:",omitempty"`
	Status  string         `json:",omitempty"`
	Reason  string         `json:",omitempty"`
	Outputs map[string]any `json:",omitempty"`
}

// ChildInput is what a child's attempt on a worker knows of its task.
type ChildInput struct {
	Parent string // the parent's task id
	Depth  int
}

// kid is a child task in the workflow.
type kid struct {
	task   sched.Task
	parent string // the parent's task id
	asker  Asker  // the attempt that started it
	pf     *flight
	pk     *kid
	given  map[string]any // its spawn inputs or handoff_context
	inputs map[string]any // its GO task's inputs
	hctx   map[string]any
	ctx    workflow.Context
	cancel workflow.CancelFunc
	number int  // its attempt now; 0 when none runs
	going  bool // its attempt is in GO
	done   *ChildDone
}

// children is the workflow's task tree of children.
type children struct {
	tasks *sched.Tasks[*kid]
	live  map[string]*kid // by task id
	ids   []string        // every child task's id, carried on continue-as-new
	// exports are the outputs of the children that completed under a
	// cue's attempt whose cue accepts child exports, for its end.
	exports map[*flight][]attempt.ChildExport
}

func (c *collab) children() {
	c.kids = children{live: map[string]*kid{}, exports: map[*flight][]attempt.ChildExport{}, tasks: sched.NewTasks(sched.TasksConfig[*kid]{
		Working: func(k *kid) bool { return k.number > 0 }, Speaks: driver.Speaks})}
	if k := c.w.in.Carry; k != nil {
		c.kids.tasks.Continue(k.Tasks, 0)
		c.kids.ids = k.Tasks
	}
	_ = workflow.SetUpdateHandlerWithOptions(c.w.ctx, UpdateChild, c.child, workflow.UpdateHandlerOptions{Validator: c.validChild})
}

func (c *collab) validChild(in ChildAsk) error {
	if in.Kind != "handoff" && in.Kind != "spawn" || in.To == "" {
		return fmt.Errorf("task.%s: a kind (handoff or spawn) and a receiver are needed", in.Kind)
	}
	return c.running("task."+in.Kind, in.Asker)
}

// kidAsking reports whether a request comes from a child's attempt in flight.
func (c *collab) kidAsking(a Asker) bool {
	k := c.kids.live[a.Cue]
	return k != nil && k.task.Agent.ID == a.Agent && k.number == a.Attempt && k.ctx.Err() == nil
}

// child checks a handoff or spawn against the tree, starts the child and
// answers: at once for a spawn, at the child's end for a handoff.
func (c *collab) child(ctx workflow.Context, in ChildAsk) (ChildDone, error) {
	w := c.w
	if workflow.GetVersion(ctx, changeChildren, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return ChildDone{Refused: "this run started on a version of orch that ran no handoffs on Temporal"}, nil
	}
	refuse := func(why string) (ChildDone, error) {
		what := "handoff from " + in.Agent + " to " + in.To + " refused: " + why
		if in.Kind == "spawn" {
			what = "task.spawn of " + in.To + " refused: " + why
		}
		w.emit(record.Event{Type: record.EvNote, Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt, Reason: what})
		return ChildDone{Refused: why}, nil
	}
	to := w.plan.Agents[in.To]
	if to == nil {
		return refuse(fmt.Sprintf("no agent %s in this run", in.To))
	}
	k := &kid{asker: in.Asker, hctx: in.Context, given: in.Context}
	var parentTask sched.Task
	var pctx workflow.Context
	var inherited map[string]any
	if pk := c.kids.live[in.Cue]; pk != nil {
		k.pk, parentTask, pctx, inherited, k.parent = pk, pk.task, pk.ctx, pk.inputs, pk.task.ID
	} else if pos, f := w.flightOf(in.Asker); f != nil {
		k.pf, parentTask, pctx, k.parent = f, c.kids.tasks.Root(in.Cue, f.agent), f.actx, in.Cue
		inherited = w.task(pos, f).Inputs
	} else {
		return refuse("its sender is not at work")
	}
	if in.Kind == "spawn" {
		k.given = in.Inputs
		var missing []string
		for _, r := range to.Requires { // the child inherits the sender's inputs
			_, had := inherited[r]
			if _, given := in.Inputs[r]; !given && !had {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			return refuse(fmt.Sprintf("the inputs lack %s, which %s requires", strings.Join(missing, ", "), to.ID))
		}
	}
	if problems := sched.ChainProblems(planner.MaxHandoffDepth(w.plan.Cuelist), parentTask.Depth, parentTask.Chain, to.ID, in.Kind); len(problems) > 0 {
		return refuse(strings.Join(problems, "; "))
	}
	k.task = c.kids.tasks.Child(parentTask.Node, to, in.Kind)
	k.inputs = map[string]any{}
	for _, m := range []map[string]any{inherited, in.Inputs, in.Context} { // what it was given wins
		for key, v := range m {
			k.inputs[key] = v
		}
	}
	k.ctx, k.cancel = workflow.WithCancel(pctx)
	c.kids.live[k.task.ID] = k
	c.kids.ids = append(c.kids.ids, k.task.ID)
	w.emit(record.Event{Type: record.EvTaskStarted, Cue: k.task.ID, Agent: to.ID, Data: record.TaskStartedData{Parent: k.parent, Kind: in.Kind,
		TaskRef: in.TaskRef, Depth: k.task.Depth, Chain: k.task.Chain, Context: k.given}})
	w.running++ // the run waits for it, as for an attempt
	workflow.Go(w.ctx, func(gctx workflow.Context) { c.runKid(gctx, k) })
	if in.Kind == "spawn" {
		return ChildDone{TaskID: k.task.ID}, nil
	}
	if err := workflow.Await(ctx, func() bool { return k.done != nil }); err != nil {
		return ChildDone{}, err
	}
	return *k.done, nil
}

// flightOf is the root attempt in flight a request names.
func (w *wf) flightOf(a Asker) (int, *flight) {
	for pos, fs := range w.atts {
		for _, f := range fs {
			if f != nil && f.number == a.Attempt && f.agent.ID == a.Agent && w.core.Cue(pos).ID == a.Cue && f.stopWhy == "" {
				return pos, f
			}
		}
	}
	return -1, nil
}

// runKid takes a child through its attempts, records how it ended and
// tells its parent, unless the parent's end is why it ended. It runs on its
// own coroutine (gctx, for its waits); its activities and timers are in
// k.ctx, which its parent's end cancels.
func (c *collab) runKid(gctx workflow.Context, k *kid) {
	w, agent := c.w, k.task.Agent
	res := ChildDone{TaskID: k.task.ID}
	for tries := 1; ; tries++ {
		if k.ctx.Err() != nil {
			res.Status, res.Reason = string(record.CueStopped), k.why()
			break
		}
		r := c.kidAttempt(gctx, k, tries)
		end := sched.End{Outputs: r.Outputs}
		if r.Failed {
			end.Failed, end.Class, end.Reason = true, r.Class, r.Reason
			end.Retriable = sched.Retriable(agent, r.Class)
		}
		step := w.core.ChildEnded(workflow.Now(w.ctx), agent, tries, end)
		w.log.addLogs(SeqLogs{Cue: k.task.ID, Agent: agent.ID, Attempt: tries, Lines: r.Log})
		w.emit(record.Event{Type: record.EvAttemptEnded, Cue: k.task.ID, Agent: agent.ID, Attempt: tries, State: string(step.Attempt), Reason: end.Reason,
			Data: record.AttemptEndedData{Class: end.Class, ExitCode: r.ExitCode, PID: r.PID, Outputs: r.Outputs}})
		k.number = 0
		if !step.Retry {
			res.Status, res.Reason = string(step.End), step.Reason
			if step.End == sched.Completed {
				res.Outputs = end.Outputs
			}
			break
		}
		_ = workflow.NewTimer(k.ctx, step.At.Sub(workflow.Now(w.ctx))).Get(gctx, nil)
	}
	ev := record.Event{Type: record.EvCueState, Cue: k.task.ID, State: res.Status, Reason: res.Reason}
	if res.Status == string(record.CueCompleted) {
		ev.Data = record.CueStateData{Outputs: res.Outputs}
	}
	w.emit(ev)
	c.kids.tasks.End(k.task.Node, res.Status)
	if res.Status == string(record.CueCompleted) {
		c.export(k, res.Outputs)
	}
	c.deliverSummary(k) // notifymode.go
	delete(c.kids.live, k.task.ID)
	if k.task.Kind == "spawn" && k.ctx.Err() == nil { // its parent waits for no answer: it is announced
		c.inbox[k.asker] = append(c.inbox[k.asker], Received{Announce: &protocols.TaskAnnounce{TaskID: k.task.ID, Agent: agent.ID,
			Status: res.Status, Outputs: res.Outputs, Reason: res.Reason}})
	}
	k.done = &res
	k.cancel()
	w.running--
	c.changed()
}

// export keeps a completed child's outputs for the cue whose tree it is in,
// if that cue declares accept_child_exports (as locally): its own agent's
// attempt merges them into its outputs when it completes (withExports).
func (c *collab) export(k *kid, outputs map[string]any) {
	root := k
	for root.pk != nil {
		root = root.pk
	}
	f := root.pf
	if f == nil || len(outputs) == 0 || !c.w.core.Cue(f.pos).AcceptChildExports {
		return
	}
	c.kids.exports[f] = append(c.kids.exports[f], attempt.ChildExport{Task: k.task.ID, Outputs: outputs})
}

// withExports merges the exports of the children of a cue's attempt into
// the outputs it completed with (attempt.WithChildExports); a child's value
// its own outputs hold otherwise is noted as a warning.
func (c *collab) withExports(f *flight, res *AttemptResult) {
	exports := c.kids.exports[f]
	delete(c.kids.exports, f)
	if res.Failed {
		return
	}
	merged, clashes := attempt.WithChildExports(res.Outputs, exports)
	res.Outputs = merged
	cue := c.w.core.Cue(f.pos).ID
	for _, x := range clashes {
		c.w.emit(record.Event{Type: record.EvNote, Cue: cue, Agent: f.agent.ID, Attempt: f.number,
			Reason: fmt.Sprintf("warning: child task %s exports %q, which %s's own outputs hold with another value: cue %s keeps its own", x.Task, x.Key, f.agent.ID, cue)})
	}
}

// why a child stops: its parent's attempt ended (stopped, for the same
// reason).
func (k *kid) why() string {
	switch {
	case k.rootFlight() != nil && k.rootFlight().interrupt != "":
		return k.rootFlight().interrupt
	case k.pf != nil && k.pf.stopWhy != "":
		return k.pf.stopWhy
	case k.pk != nil && k.pk.done != nil && k.pk.done.Status == string(record.CueStopped):
		return k.pk.done.Reason
	}
	return "their parent's attempt ended"
}

// kidAttempt runs one attempt of a child: WARNING, STANDBY and GO at once.
func (c *collab) kidAttempt(gctx workflow.Context, k *kid, n int) AttemptResult {
	w, agent, id := c.w, k.task.Agent, k.task.ID
	w.emit(record.Event{Type: record.EvAttemptStarted, Cue: id, Agent: agent.ID, Attempt: n, Data: record.AttemptStartedData{}})
	w.emit(record.Event{Type: record.EvCueState, Cue: id, State: string(record.CueWarning)})
	k.number = n
	in := AttemptInput{RunID: w.in.RunID, Path: w.in.Path, SpecHash: w.in.SpecHash, Cue: id, Agent: agent.ID, Attempt: n, Try: 1,
		Child: &ChildInput{Parent: k.parent, Depth: k.task.Depth}}
	var lines []LogLine
	run := func(name string) AttemptResult {
		r := c.kidPhase(gctx, k, name, in)
		lines = append(lines, r.Log...)
		r.Log = lines
		return r
	}
	if !trivial(agent) {
		if r := run(ActivityWarning); r.Failed {
			return r
		}
		w.emit(record.Event{Type: record.EvCueState, Cue: id, State: string(record.CueStandby)})
		if r := run(ActivityStandby); r.Failed {
			return r
		}
	}
	w.emit(record.Event{Type: record.EvCueState, Cue: id, State: string(record.CueGo)})
	in.Task = c.kidTask(k, n)
	k.going = true
	defer func() { k.going = false }()
	return run(ActivityGo)
}

// kidTask is a child's GO task: inherited inputs with what it was given on
// top, its place in the tree, its tools at its depth, the blackboard.
func (c *collab) kidTask(k *kid, n int) *attempt.Task {
	w, agent := c.w, k.task.Agent
	tools := w.plan.ToolsOf(agent.ID).At(k.task.Depth)
	if tools == nil {
		tools = []string{}
	}
	t := &attempt.Task{RunID: w.in.RunID, CueID: k.task.ID, AgentID: agent.ID, Attempt: n, Inputs: k.inputs, Tools: tools, HandoffContext: k.hctx,
		TaskID: k.task.ID, ParentTaskID: k.parent, Depth: k.task.Depth}
	entries := map[string]record.BlackboardEntry{}
	for key, e := range w.board {
		entries[key] = record.BlackboardEntry{Key: key, Value: e.value, Version: e.version, Author: e.author}
	}
	return attempt.WithBoard(t, entries)
}

// kidPhase runs one activity of a child's attempt and waits for it; a
// lost worker's phase is dispatched again or not (kidLost).
func (c *collab) kidPhase(gctx workflow.Context, k *kid, name string, in AttemptInput) AttemptResult {
	w, agent := c.w, k.task.Agent
	cl := w.plan.Cuelist
	timeout := attempt.StandbyTimeout(cl)
	if name == ActivityGo {
		timeout = attempt.GoTimeout(cl, &planner.Cue{Cue: &spec.Cue{ID: in.Cue}}, agent)
	}
	grace := attempt.KillGrace(cl, 0)
	opts := workflow.ActivityOptions{TaskQueue: queueOf(agent, w.queue), ScheduleToStartTimeout: 24 * time.Hour,
		StartToCloseTimeout: timeout + 2*grace + time.Minute, HeartbeatTimeout: HeartbeatTimeout, WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}}
	if w.cluster() {
		opts.Summary = fmt.Sprintf("%s %s attempt %d (%s)", name, in.Cue, in.Attempt, agent.ID)
	}
	for try := 1; ; try++ {
		in.Try = try
		var res AttemptResult
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(k.ctx, opts), name, in).Get(gctx, &res)
		w.recordMessages(in.Cue, agent.ID, in.Attempt, &res)
		var canceled *temporal.CanceledError
		switch {
		case err == nil:
			return res
		case errors.As(err, &canceled) || k.ctx.Err() != nil:
			return AttemptResult{Failed: true, Class: "stopped", Reason: k.why()}
		case lostWhy(err) != "":
			if again, res := c.kidLost(gctx, k, name, in, try, lostWhy(err)); !again {
				return res
			}
			continue
		}
		return AttemptResult{Failed: true, Class: "malfunction", Reason: fmt.Sprintf("%s: %v", name, err)}
	}
}
