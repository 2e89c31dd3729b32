package temporal

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// The workflow's side of merges (merge.go): the core decides a merge at
// fan-in (or the run's result); the workflow records its attempt as the
// local runner does (orch:merge, EvMerge, EvWorktree) and has a worker make
// it (orch.merge), then reports what came of it to the core.

// changeMerge: worktree branches are merged at fan-in, and the run's result
// made, by orch.merge (before: fan-in refused, the result by orch.result);
// a worktree run continues as new, its merges carried.
const (
	changeMerge                   = "orch-worktree-merge"
	versionMerge workflow.Version = 1
)

// merging is the run's merges as the workflow carries them out.
type merging struct {
	version workflow.Version
	asked   bool // version was read (GetVersion, once per execution)
	jobs    map[int]*wfMerge
	answers workflow.Channel // mergeAnswer: a merge's question closed
	beat    versionOnce      // changeMergeBeat
}

// wfMerge is one merge: where it is and what it takes in.
type wfMerge struct {
	id, pos, attempt int
	branch, what     string
	path             string // its worktree on the worker that made it
	sources          []sched.MergeSource
	in               MergeInput // its first round's
	queue            string     // where its rounds go: the worker that keeps its worktree, once one does
	host             string
	kept             bool // its worktree is kept on that worker, for the person
	pending          *sched.MergeSource
	problem          *sched.MergeProblem
	asking           bool
	resolver         Asker // the resolver's attempt while it works
	cancel           workflow.CancelFunc
	lost             int // workers lost while making it (merge_lost.go)
}

// mergeAnswer is how a merge's question closed.
type mergeAnswer struct {
	id    int
	asked Asked
}

// mergeVersion is the run's merge behaviour: read only by runs with
// worktree agents (others never merge), once.
func (w *wf) mergeVersion() workflow.Version {
	if !w.merging.asked {
		w.merging.asked = true
		w.merging.version = workflow.GetVersion(w.ctx, changeMerge, workflow.DefaultVersion, versionMerge)
	}
	return w.merging.version
}

// mergeBranch is the branch of merge id of cue (as locally).
func (w *wf) mergeBranch(id int, cue string) string {
	if id == sched.ResultMerge {
		return w.resultBranchName()
	}
	return gitwork.MergeBranch(w.in.RunID, cue)
}

// runMerge records the merge's attempt and has a worker make it.
func (w *wf) runMerge(d sched.Decision) {
	c := w.core.Cue(d.Cue)
	m := &wfMerge{branch: w.mergeBranch(d.MergeID, c.ID), sources: d.Sources}
	if w.merging.jobs == nil {
		w.merging.jobs = map[int]*wfMerge{}
	}
	w.merging.jobs[d.MergeID] = m
	w.emit(record.Event{Type: record.EvAttemptStarted, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, Data: record.AttemptStartedData{}})
	if w.in.Git == nil {
		w.core.Merged(d.MergeID, d.Attempt, sched.MergeReport{Err: "the run names no git remote to merge its branches through"})
		return
	}
	data := record.MergeData{Branch: m.branch}
	for _, s := range d.Sources {
		data.Sources = append(data.Sources, record.MergeSource(s))
	}
	names := taskNames(d.Sources)
	what := "the run's result"
	policy := spec.MergeOf(w.plan.Cuelist, nil)
	queue := w.queue
	if d.MergeID != sched.ResultMerge {
		what, policy = "cue "+c.ID, spec.MergeOf(w.plan.Cuelist, c.Cue)
		for _, id := range c.Agents { // where the cue's agent works: its clone has the merge at hand
			if a := w.plan.Agents[id]; a != nil && a.Workspace == "worktree" {
				queue = queueOf(a, w.queue)
				break
			}
		}
	}
	w.emit(record.Event{Type: record.EvMerge, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: record.MergeStarted,
		Reason: fmt.Sprintf("merging the branches of %s for %s", names, what), Data: data})
	timeout := attempt.GoTimeout(w.plan.Cuelist, c, &spec.Agent{ID: mergeAgentID})
	m.id, m.pos, m.attempt, m.what, m.queue = d.MergeID, d.Cue, d.Attempt, what, queue
	m.in = MergeInput{RunID: w.in.RunID, Remote: w.in.Git.Remote, ID: d.MergeID, Cue: c.ID, Result: w.resultBranchName(), Sources: d.Sources,
		Timeout: timeout, Base: w.in.Git.Base, BaseName: w.in.Git.BaseName, Keep: policy.Policy() != spec.MergeFail}
	if policy != nil {
		m.in.Verify = policy.Verify
	}
	m.in.Secrets = redact.Declared(w.plan) // its verify output is masked with them too
	w.mergeRound(m, "")
}

// mergeRound has a worker make a round of merge m: the first (by ""), or
// one going on after the person (by) resolved its problem; what came of it
// goes to the core.
func (w *wf) mergeRound(m *wfMerge, by string) {
	c := w.core.Cue(m.pos)
	in := m.in
	if by != "" {
		in.By, in.Problem, in.Pending = by, m.problem, m.pending
	}
	actx, cancel := workflow.WithCancel(w.ctx)
	m.cancel = cancel
	actx = workflow.WithActivityOptions(actx, w.mergeBeat(workflow.ActivityOptions{TaskQueue: m.queue,
		ScheduleToStartTimeout: 24 * time.Hour, StartToCloseTimeout: in.Timeout + 15*time.Minute,
		Summary:     fmt.Sprintf("%s merge (attempt %d)", c.ID, m.attempt),
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second}}))
	if m.kept { // only the worker that keeps the worktree can go on: no other
		actx = workflow.WithScheduleToStartTimeout(actx, 10*time.Minute)
	}
	w.sel.AddFuture(workflow.ExecuteActivity(actx, ActivityMerge, in), func(fut workflow.Future) {
		var res MergeResult
		rep := sched.MergeReport{}
		if err := fut.Get(w.ctx, &res); err != nil {
			if w.mergeLost(m, by, err) {
				return
			}
			rep.Err = "merging on a worker: " + err.Error()
			if m.kept {
				rep.Err = fmt.Sprintf("going on with the merge on the worker that keeps its worktree (%s): %v", m.host, err)
			}
		} else {
			m.path = res.Path
			if m.kept = res.Kept; res.Kept {
				m.queue, m.host, m.pending = res.Queue, res.Host, res.Pending
			}
			for _, n := range res.Notes {
				n.Data.Branch = m.branch
				w.emit(record.Event{Type: record.EvMerge, Cue: c.ID, Agent: mergeAgentID, Attempt: m.attempt, State: n.State, Reason: n.Reason, Data: n.Data})
			}
			rep = sched.MergeReport{Commit: res.Commit, Problem: res.Problem, Err: res.Err}
			if res.Result != nil {
				w.result = res.Result
			}
		}
		w.core.Merged(m.id, m.attempt, rep)
		w.apply()
	})
}

// askMerge puts a merge's problem to the person: a question from the
// merge's attempt (orch answer RUN QID resolved, or abort), closed as an
// agent's is (collab.ask); the person resolves it in the worktree the
// worker kept.
func (w *wf) askMerge(d sched.Decision) {
	m := w.merging.jobs[d.MergeID]
	c := w.chain.collab
	if m == nil || !m.kept || c == nil {
		w.core.MergeUnanswered(d.MergeID, d.Attempt, "the merge's worktree was not kept on a worker for the person")
		return
	}
	m.problem, m.asking = d.Problem, true
	what := "resolve the conflicts there (leave no conflict marker; committing is up to you)"
	if d.Problem.Kind == "verify" {
		what = "fix the tree there so that " + gitwork.QuoteArgv(m.in.Verify) + " passes"
	}
	text := fmt.Sprintf("%s. In the worktree %s (branch %s) on %s, %s, then answer %q — or %q to fail %s.",
		d.Problem.Reason, m.path, m.branch, m.host, what, sched.AnswerResolved, sched.AnswerAbort, m.what)
	ask := Ask{Asker: Asker{Cue: w.core.Cue(d.Cue).ID, Agent: mergeAgentID, Attempt: d.Attempt}, Question: text, Complexity: "deep"}
	if w.merging.answers == nil {
		w.merging.answers = workflow.NewChannel(w.ctx)
		w.sel.AddReceive(w.merging.answers, func(ch workflow.ReceiveChannel, _ bool) {
			var a mergeAnswer
			ch.Receive(w.ctx, &a)
			w.mergeAnswered(a)
		})
	}
	id := d.MergeID
	workflow.Go(w.ctx, func(ctx workflow.Context) {
		asked, _ := c.ask(ctx, ask)
		w.merging.answers.Send(ctx, mergeAnswer{id: id, asked: asked})
	})
}

// mergeAnswered hands the person's answer (or the question's end) to the
// core.
func (w *wf) mergeAnswered(a mergeAnswer) {
	m := w.merging.jobs[a.id]
	if m == nil || !m.asking {
		return
	}
	m.asking = false
	switch {
	case a.asked.Closed == "":
		w.core.MergeAnswered(m.id, m.attempt, a.asked.Answer)
	case a.asked.Class == "unanswered":
		w.core.MergeUnanswered(m.id, m.attempt, a.asked.Closed)
	}
	w.apply()
}

// continueMerge checks the person's resolution on the worker that kept the
// worktree, and goes on.
func (w *wf) continueMerge(d sched.Decision) {
	m := w.merging.jobs[d.MergeID]
	if m == nil {
		return
	}
	w.emit(record.Event{Type: record.EvMerge, Cue: w.core.Cue(d.Cue).ID, Agent: mergeAgentID, Attempt: d.Attempt, State: record.MergeChecking,
		Reason: "checking the resolution by the person", Data: record.MergeData{Branch: m.branch}})
	w.mergeRound(m, "the person")
}

// mergeAsking reports whether a is a merge's attempt with a question open
// (the person's answer is awaited), or a merge's resolver at work: its
// requests are served as a running attempt's.
func (w *wf) mergeAsking(a Asker) bool {
	for _, m := range w.merging.jobs {
		if m.resolver.Agent != "" && m.resolver == a || a.Agent == mergeAgentID && m.asking && m.attempt == a.Attempt && w.core.Cue(m.pos).ID == a.Cue {
			return true
		}
	}
	return false
}

// stopMerge stops a merge's work on its worker (the run stops).
func (w *wf) stopMerge(d sched.Decision) {
	if m := w.merging.jobs[d.MergeID]; m != nil {
		m.asking = false // its question is withdrawn
		if m.cancel != nil {
			m.cancel()
		}
	}
}

// mergeDone records the end of a merge's attempt: its branch's commit,
// and for the result merge the run's result.
func (w *wf) mergeDone(d sched.Decision) {
	c := w.core.Cue(d.Cue)
	m := w.merging.jobs[d.MergeID]
	if m == nil {
		m = &wfMerge{branch: w.mergeBranch(d.MergeID, c.ID)}
	}
	state := record.MergeFailed
	var outputs map[string]any
	data := record.MergeData{Branch: m.branch}
	switch d.AttemptState {
	case sched.AttemptCompleted:
		state = record.MergeCompleted
		outputs = map[string]any{"merge_branch": m.branch, "merge_commit": d.Key}
		data.Commit = d.Key
		if d.MergeID == sched.ResultMerge {
			data.Result = w.result
		}
		base := d.Key
		if len(m.sources) > 0 && m.sources[0].Commit != "" {
			base = m.sources[0].Commit
		}
		w.emit(record.Event{Type: record.EvWorktree, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt,
			Data: record.WorktreeData{Branch: m.branch, Base: base, From: "merge of " + taskNames(m.sources), Path: m.path, Commit: d.Key}})
	case sched.AttemptStopped:
		state = record.MergeStopped
	}
	w.emit(record.Event{Type: record.EvMerge, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: state, Reason: d.Reason, Data: data})
	w.emit(record.Event{Type: record.EvAttemptEnded, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: string(d.AttemptState), Reason: d.Reason,
		Data: record.AttemptEndedData{Class: d.Class, Outputs: outputs}})
	if m.kept && d.AttemptState != sched.AttemptCompleted { // the worker that keeps its worktree removes it
		m.kept = false
		actx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{TaskQueue: m.queue,
			ScheduleToStartTimeout: 10 * time.Minute, StartToCloseTimeout: 5 * time.Minute, Summary: c.ID + " merge: its worktree removed"})
		w.running++ // the run ends once it is removed (or its worker is gone)
		w.sel.AddFuture(workflow.ExecuteActivity(actx, ActivityMergeDrop, m.in), func(workflow.Future) { w.running-- })
	}
}

func taskNames(sources []sched.MergeSource) string {
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.Task
	}
	return strings.Join(names, ", ")
}
