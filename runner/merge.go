package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// The loop's side of the merges the core decides (sched/merge.go): each
// decision is recorded, then carried out — the git work on a goroutine of
// its own (merge_git.go), a resolver as an attempt in the merge's worktree
// (merge_resolver.go), a question to the person through the run's
// questions — and what came of it goes back to the core as a report.

// merging is the run's merges, by id (a cue's plan position, or
// sched.ResultMerge), and the run's result once merged. The loop's.
type merging struct {
	merges       map[int]*merge
	resultBranch *record.ResultBranch
}

// merge is one merge as the loop carries it out.
type merge struct {
	id       int // the cue's plan position, or sched.ResultMerge
	pos      int // the cue it is recorded at
	att      *attemptRun
	tree     *gitwork.MergeTree
	sources  []sched.MergeSource
	verify   []string
	timeout  time.Duration // the verify command's
	problem  *sched.MergeProblem
	cancel   context.CancelFunc   // ends the round running
	resolver *attemptRun          // the resolver at work
	question string               // the open question's id
	result   *record.ResultBranch // the result merge, once done
}

// mergeAgent stands for orch itself in the records of a merge's attempt.
var mergeAgent = &spec.Agent{ID: sched.MergeAgent}

// repMerge, repMergeAnswer: a merge's round ended; the person answered a
// merge's question.
const (
	repMerge reportKind = iota + 100
	repMergeAnswer
)

// applyMerge records and carries out a merge decision.
func (r *run) applyMerge(ctx context.Context, d sched.Decision) {
	c := r.core.Cue(d.Cue)
	switch d.Kind {
	case sched.StartMerge:
		r.startMerge(ctx, c, d)
	case sched.ResolveMerge:
		r.startResolver(ctx, c, d)
	case sched.AskMerge:
		r.askMerge(c, d)
	case sched.ContinueMerge:
		m := r.merges[d.MergeID]
		by := "the person"
		if d.Agent != nil {
			by = d.Agent.ID
		}
		r.emit(m.event(record.MergeChecking, "checking the resolution by "+by, record.MergeData{}))
		r.then(func() { r.mergeRound(m, by) })
	case sched.StopMerge:
		m := r.merges[d.MergeID]
		r.withdrawMergeQuestion(m)
		why := d.Reason
		r.then(func() { m.halt(why) })
	case sched.MergeEnded:
		r.mergeEnded(d)
	}
}

// startMerge records the merge's attempt and starts its first round.
func (r *run) startMerge(ctx context.Context, c *planner.Cue, d sched.Decision) {
	m := &merge{id: d.MergeID, pos: d.Cue, sources: d.Sources}
	var policy *spec.Merge
	if d.MergeID == sched.ResultMerge {
		policy = spec.MergeOf(r.plan.Cuelist, nil)
	} else {
		policy = spec.MergeOf(r.plan.Cuelist, c.Cue)
	}
	if policy != nil {
		m.verify = policy.Verify
	}
	m.att = newAttempt(r.host, c, d.Cue, -1, mergeAgent, nil, d.Attempt, r.reports)
	m.timeout = m.att.Timeouts.Go
	if r.merges == nil {
		r.merges = map[int]*merge{}
	}
	r.merges[m.id] = m
	r.emit(record.Event{Type: record.EvAttemptStarted, Cue: c.ID, Agent: mergeAgent.ID, Attempt: d.Attempt, Data: record.AttemptStartedData{}})
	if r.host.worktrees == nil { // no agent of the plan works in a worktree: no branch can have come
		r.then(func() { r.sendMergeReport(m, sched.MergeReport{Err: "the run has no git repository to merge in"}) })
		return
	}
	m.tree = r.host.worktrees.mergeTree(m, c.ID, r.resultBranchName())
	data := record.MergeData{Path: m.tree.Path}
	for _, s := range d.Sources {
		data.Sources = append(data.Sources, record.MergeSource(s))
	}
	what := fmt.Sprintf("merging the branches of %s for %s", sourceTasks(d.Sources), m.tree.What)
	r.emit(m.event(record.MergeStarted, what, data))
	r.then(func() { r.mergeRound(m, "") })
}

// mergeRound runs a round of the merge on a goroutine of its own: the first
// (by ""), or one going on after a resolution by by.
func (r *run) mergeRound(m *merge, by string) {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	r.running++
	r.active.Add(1)
	go func() {
		defer r.active.Done()
		defer cancel()
		rep := m.round(ctx, r, by)
		r.sendMergeReport(m, rep)
	}()
}

// sendMergeReport reports a round's end to the loop (counted in running).
func (r *run) sendMergeReport(m *merge, rep sched.MergeReport) {
	select {
	case r.reports <- report{kind: repMerge, merge: m, merged: rep}:
	case <-r.loopDone:
	}
}

// handleMerge applies a merge's report: a round's end, an answer, a
// resolver's end (rep.att.resolving).
func (r *run) handleMerge(ctx context.Context, rep report) {
	switch {
	case rep.kind == repMerge:
		r.running--
		rep.merge.cancel = nil
		r.core.Merged(rep.merge.id, rep.merge.att.Number, rep.merged)
	case rep.kind == repMergeAnswer:
		r.core.MergeAnswered(rep.merge.id, rep.merge.att.Number, rep.text)
	default: // a resolver's attempt ended
		a := rep.att
		m := a.resolving
		r.running--
		if m.resolver == a {
			m.resolver = nil
		}
		end := sched.End{Outputs: rep.outputs}
		if f := rep.fail; f != nil {
			end.Failed, end.Class, end.Reason = true, f.Class, f.Reason
		}
		r.core.ResolverEnded(m.id, a.pos, a.Number, a.Agent, end)
	}
	r.apply(ctx, &rep)
}

// askMerge puts a merge's problem to the person: a question asked by the
// merge's attempt, answered with resolved or abort (orch answer, the
// terminal's prompt, orch serve's inbox).
func (r *run) askMerge(c *planner.Cue, d sched.Decision) {
	m := r.merges[d.MergeID]
	m.problem = d.Problem
	text := m.questionText(d.Problem)
	q := r.tasks.AskPerson(time.Now(), m.att, r.questionTimeout())
	m.question = q.ID
	r.emit(record.Event{Type: record.EvQuestion, Cue: c.ID, Agent: mergeAgent.ID, Attempt: m.att.Number,
		Data: record.QuestionData{ID: q.ID, Question: text, Complexity: "deep", To: "person", Deadline: q.Deadline.UTC()}})
	oq := &openQuestion{body: protocols.QuestionAsk{Question: text, Complexity: "deep"},
		deliver: func(answer string) {
			select {
			case r.reports <- report{kind: repMergeAnswer, merge: m, text: answer}:
			case <-r.loopDone:
			}
		},
		expired: func(reason string) { r.core.MergeUnanswered(m.id, m.att.Number, reason) }}
	r.openQuestions[q.ID] = oq
	r.then(func() { r.toPerson(oq, q, q.Deadline) })
}

// withdrawMergeQuestion closes a merge's open question: it ended otherwise.
func (r *run) withdrawMergeQuestion(m *merge) {
	a := m.att
	for _, q := range r.tasks.Withdraw(a) {
		r.closed(q)
		r.emit(record.Event{Type: record.EvQuestionClosed, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number, State: record.QuestionWithdrawn,
			Reason: "the merge it was about ended", Data: record.AnswerData{ID: q.ID}})
	}
}

// mergeEnded records the end of a merge's attempt: its branch's commit,
// and for the result merge the run's result.
func (r *run) mergeEnded(d sched.Decision) {
	m := r.merges[d.MergeID]
	c := r.core.Cue(d.Cue)
	r.withdrawMergeQuestion(m)
	state := record.MergeCompleted
	var outputs map[string]any
	data := record.MergeData{}
	switch d.AttemptState {
	case sched.AttemptCompleted:
		outputs = map[string]any{"merge_branch": m.tree.Branch, "merge_commit": d.Key}
		data.Commit, data.Result = d.Key, m.result
		r.emit(record.Event{Type: record.EvWorktree, Cue: c.ID, Agent: mergeAgent.ID, Attempt: m.att.Number,
			Data: record.WorktreeData{Branch: m.tree.Branch, Base: m.sources[0].Commit, From: "merge of " + sourceTasks(m.sources), Path: m.tree.Path, Commit: d.Key}})
		if m.id == sched.ResultMerge {
			r.resultBranch = m.result
		}
	case sched.AttemptStopped:
		state = record.MergeStopped
	default:
		state = record.MergeFailed
	}
	if m.tree != nil {
		r.emit(m.event(state, d.Reason, data))
	}
	r.emit(record.Event{Type: record.EvAttemptEnded, Cue: c.ID, Agent: mergeAgent.ID, Attempt: m.att.Number, State: string(d.AttemptState), Reason: d.Reason,
		Data: record.AttemptEndedData{Class: d.Class, Outputs: outputs}})
	a := m.att
	r.then(func() { a.logs.Close(a.logLine("stderr", "")) })
}

// halt stops what the merge has at work: its round's git commands and
// verify command, its resolver.
func (m *merge) halt(why string) {
	if m.cancel != nil {
		m.cancel()
	}
	if m.resolver != nil {
		m.resolver.stop(why)
	}
}

// haltMerges stops every merge's work (the run stops).
func (r *run) haltMerges(why string) {
	for _, m := range r.merges {
		m.halt(why)
	}
}

// event is an EvMerge of the merge's attempt, in state with reason.
func (m *merge) event(state, reason string, data record.MergeData) record.Event {
	data.Branch = m.tree.Branch
	return record.Event{RunID: m.att.r.id, At: time.Now().UTC(), Type: record.EvMerge, Cue: m.att.Cue.ID, Agent: mergeAgent.ID, Attempt: m.att.Number, State: state, Reason: reason, Data: data}
}

// note records a step the round's goroutine took (not a decision: its
// failure to be recorded does not stop the merge).
func (m *merge) note(state, reason string, data record.MergeData) {
	_ = m.att.r.publish(context.Background(), m.event(state, reason, data))
}

// questionText asks the person to resolve a merge's problem.
func (m *merge) questionText(p *sched.MergeProblem) string {
	what := "resolve the conflicts there (leave no conflict marker; committing is up to you)"
	if p.Kind == "verify" {
		what = "fix the tree there so that " + quoteArgv(m.verify) + " passes"
	}
	return fmt.Sprintf("%s. In the worktree %s (branch %s), %s, then answer %q — or %q to fail %s.",
		p.Reason, m.tree.Path, m.tree.Branch, what, sched.AnswerResolved, sched.AnswerAbort, m.tree.What)
}

// worktreeBase is where a worktree attempt at cue c starts: the commit its
// merge ended at, when the branches of its dependencies were merged; else
// the commit (or branch) of the one dependency that used a worktree; ""
// (the run's HEAD) when none did.
func (r *run) worktreeBase(c *planner.Cue) (base, from string) {
	pos := r.core.Pos(c.ID)
	if commit, tasks, ok := r.core.MergeCommit(pos); ok {
		return commit, "merge of " + strings.Join(tasks, ", ")
	}
	sources := r.core.MergeSources(pos)
	if len(sources) == 0 {
		return "", ""
	}
	s := sources[0] // one: several were merged
	if s.Commit != "" {
		return s.Commit, s.Task
	}
	return s.Branch, s.Task
}

// resultBranchName is the run's result branch: orch/<run>/result, unless a
// cue named result would own orch/<run>/result/... (git keeps a ref and
// refs below it apart only by name).
func (r *run) resultBranchName() string { return gitwork.ResultBranch(r.id, cueIDs(r.plan)) }

func cueIDs(p *planner.Plan) []string {
	ids := make([]string, len(p.Order))
	for i, c := range p.Order {
		ids[i] = c.ID
	}
	return ids
}

func sourceTasks(sources []sched.MergeSource) string {
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.Task
	}
	return strings.Join(names, ", ")
}
