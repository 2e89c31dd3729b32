package sched

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orch-cli/orch/spec"
)

// Merges at fan-in. A cue whose agents work in git worktrees and whose
// dependencies left several worktree branches starts from a merge of them
// all, in plan order (the items of a fan-out in item order: branchesOf).
// The merge is an attempt of its own at the cue, by MergeAgent: the core
// decides it once the dependencies are complete and the conditions hold,
// before STANDBY; the runner does the git work and reports what came of it
// (Merged). A conflict, or a verify command that fails, goes to the cue's
// merge: policy: a resolver agent (an attempt at the cue, ResolverEnded),
// the person (a question, MergeAnswered), or the cue fails with class
// merge_conflict. When a run whose cues left worktree branches completes,
// they are merged the same way into the run's result (ResultMerge), recorded
// at the last of those cues in plan order.

// MergeAgent is the agent of orch's own attempt at a merge. It names no
// agent of a spec: agent ids cannot hold ':'.
const MergeAgent = "orch:merge"

// ResultMerge identifies the run's result merge (a cue's merge is
// identified by the cue's plan position).
const ResultMerge = -1

// ClassMergeConflict is the class of a merge that failed on a conflict, a
// verify command, leftover conflict markers or a person's abort.
const ClassMergeConflict = "merge_conflict"

// The outputs through which a worktree attempt names its branch (the
// runner adds them): a merge reads them from the cues it merges.
const (
	OutputWorktreeBranch = "worktree_branch"
	OutputWorktreeCommit = "worktree_commit"
)

// MergeSource is one branch a merge takes in.
type MergeSource struct {
	Task   string // the cue whose branch it is; CUE[i] for item i of a fan-out
	Branch string
	Commit string // the commit the branch ended at ("": its tip)
}

// MergeProblem is what stopped a merge, as the runner found it.
type MergeProblem struct {
	// Kind is conflict (a branch did not merge cleanly), verify (the
	// verify command failed on the merged tree), markers (conflict markers
	// remain after a resolution) or abandoned (the merge a resolution was
	// for is no longer in progress, and its branch is not merged).
	Kind   string
	Files  []string // the files in conflict, or with markers left
	Tasks  []string // whose branches collided (conflict)
	Output string   // the verify command's last lines (verify)
	Reason string   // one line for people
}

// MergeReport is the runner's account of one round of a merge: it is done
// (Commit), stopped at a problem, or could not be done at all (Err: git
// failed, the worktree could not be made).
type MergeReport struct {
	Commit  string
	Problem *MergeProblem
	Err     string
}

type mergePhase uint8

const (
	mMerging   mergePhase = iota + 1 // the runner merges, or checks a resolution and goes on
	mResolving                       // a resolver agent works in the merge's worktree
	mAsking                          // the person is asked
	mDone
	mFailed
	mStopped
)

// mergeJob is one merge in progress or done.
type mergeJob struct {
	id       int  // the cue's plan position, or ResultMerge
	anchor   *cue // the cue it is recorded at
	attempt  int  // its MergeAgent attempt at the anchor
	policy   *spec.Merge
	sources  []MergeSource
	phase    mergePhase
	resolver int           // the resolver's attempt while one works
	gave     string        // the kind of problem the resolver was last given
	problem  *MergeProblem // the problem being resolved
	commit   string
	failed   string // why it failed (ResultFailure)
}

func (j *mergeJob) over() bool { return j.phase >= mDone }

// merges are the run's merges, by id.
type merges struct {
	jobs   map[int]*mergeJob
	active int // jobs not over
}

func (m *merges) job(id int) *mergeJob {
	if m.jobs == nil {
		return nil
	}
	return m.jobs[id]
}

// MergeSources lists the worktree branches the dependencies of cue pos
// ended at, in plan order (a fan-out's items in item order).
func (c *Core) MergeSources(pos int) []MergeSource {
	cr := c.cues[pos]
	deps := make([]*cue, 0, len(cr.spec.Deps))
	for _, d := range cr.spec.Deps {
		deps = append(deps, c.byID[d.ID])
	}
	sort.Slice(deps, func(i, j int) bool { return deps[i].pos < deps[j].pos })
	var out []MergeSource
	for _, d := range deps {
		out = append(out, branchesOf(d)...)
	}
	return out
}

// itemTask names item i of fan-out cr as its task: CUE[<id>] for an item
// with an id, else CUE[i].
func itemTask(cr *cue, i int) string {
	switch {
	case cr.fan != nil && i < len(cr.fan.items):
		return cr.fan.items[i].spec.ID
	case i < len(cr.itemIDs): // restored over
		return cr.itemIDs[i]
	}
	return fmt.Sprintf("%s[%d]", cr.spec.ID, i)
}

// MergeCommit is the commit cue pos's merge ended at, and the tasks it
// merged; ok is false when the cue had no merge (or it is not done).
func (c *Core) MergeCommit(pos int) (commit string, tasks []string, ok bool) {
	j := c.merges.job(pos)
	if j == nil || j.phase != mDone {
		return "", nil, false
	}
	for _, s := range j.sources {
		tasks = append(tasks, s.Task)
	}
	return j.commit, tasks, true
}

// ResultFailure says why the run's result could not be merged ("": it
// was, or there was nothing to merge).
func (c *Core) ResultFailure() string {
	if j := c.merges.job(ResultMerge); j != nil && j.phase == mFailed {
		return j.failed
	}
	return ""
}

// mergeStarted reports whether cue cr's merge was decided.
func (c *Core) mergeStarted(cr *cue) bool { return c.merges.job(cr.pos) != nil }

// merged says whether cue cr may go on to STANDBY: it needs no merge (its
// agents work in no worktree, or fewer than two branches came to it), or
// its merge is done. Otherwise the merge is started, once.
func (c *Core) merged(cr *cue) bool {
	j := c.merges.job(cr.pos)
	if j == nil {
		if !inWorktree(cr) || len(cr.spec.Deps) == 0 { // nothing to merge (and nothing to allocate)
			return true
		}
		sources := c.MergeSources(cr.pos)
		if len(sources) < 2 {
			return true
		}
		j = c.startMerge(cr, cr.pos, sources, spec.MergeOf(c.plan.Cuelist, cr.spec.Cue))
	}
	return j.phase == mDone
}

// inWorktree reports whether one of the cue's agents works in a worktree.
func inWorktree(cr *cue) bool {
	for _, t := range cr.targets {
		if t.agent.Workspace == "worktree" {
			return true
		}
	}
	return false
}

// startResult starts the run's result merge once every cue is over and the
// run completes (no cue failed, was blocked or stopped), when its cues left
// worktree branches: all of them, in plan order (the runner leaves out a
// branch another one already holds). It is recorded at the last of those
// cues.
func (c *Core) startResult() {
	if c.merges.job(ResultMerge) != nil || c.finals < len(c.cues) || c.stopping || c.broken || c.exhausted {
		return
	}
	var sources []MergeSource
	var anchor *cue
	for _, cr := range c.cues {
		if cr.parent != nil {
			continue // an item: its fan-out's outputs list its branch
		}
		switch cr.state {
		case Completed:
			if b := branchesOf(cr); len(b) > 0 {
				sources, anchor = append(sources, b...), cr
			}
		case Skipped:
		default:
			return // the run does not complete: there is no result
		}
	}
	if anchor != nil {
		c.startMerge(anchor, ResultMerge, sources, spec.MergeOf(c.plan.Cuelist, nil))
	}
}

func (c *Core) startMerge(anchor *cue, id int, sources []MergeSource, policy *spec.Merge) *mergeJob {
	anchor.attempts++
	j := &mergeJob{id: id, anchor: anchor, attempt: anchor.attempts, policy: policy, sources: sources, phase: mMerging}
	if c.merges.jobs == nil {
		c.merges.jobs = map[int]*mergeJob{}
	}
	c.merges.jobs[id] = j
	c.merges.active++
	c.decide(Decision{Kind: StartMerge, Cue: anchor.pos, MergeID: id, Attempt: j.attempt, Sources: sources})
	return j
}

// Merged is the runner's report of a round of merge id's attempt.
func (c *Core) Merged(id, attempt int, rep MergeReport) {
	j := c.merges.job(id)
	if j == nil || j.attempt != attempt || j.over() || j.phase != mMerging {
		return // stopped meanwhile: its end is recorded
	}
	switch {
	case c.stopping:
		c.endMerge(j, AttemptStopped, "stopped", "the run was stopped")
	case rep.Err != "":
		c.endMerge(j, AttemptFailed, "workspace", rep.Err)
	case rep.Problem == nil:
		j.commit = rep.Commit
		c.endMerge(j, AttemptCompleted, "", "")
	default:
		c.mergeProblem(j, rep.Problem)
	}
}

// mergeProblem hands a problem to the merge's policy.
func (c *Core) mergeProblem(j *mergeJob, p *MergeProblem) {
	policy := j.policy.Policy()
	switch {
	case policy == spec.MergeFail:
		c.endMerge(j, AttemptFailed, ClassMergeConflict, p.Reason+" (on_conflict: fail)")
	case policy == spec.MergeAgent:
		resolver := c.plan.Agents[j.policy.Agent]
		switch {
		case resolver == nil: // orch validate reports it; a plan never gets here
			c.endMerge(j, AttemptFailed, ClassMergeConflict, p.Reason+"; the resolver "+j.policy.Agent+" is not an agent of the plan")
		case p.Kind == "markers" || p.Kind == "abandoned":
			c.endMerge(j, AttemptFailed, ClassMergeConflict, fmt.Sprintf("resolver %s: %s", resolver.ID, p.Reason))
		case p.Kind == "verify" && j.gave == "verify":
			c.endMerge(j, AttemptFailed, ClassMergeConflict, fmt.Sprintf("%s after resolver %s's fix", p.Reason, resolver.ID))
		default:
			j.anchor.attempts++
			j.resolver, j.gave, j.problem, j.phase = j.anchor.attempts, p.Kind, p, mResolving
			c.decide(Decision{Kind: ResolveMerge, Cue: j.anchor.pos, MergeID: j.id, Attempt: j.resolver, Agent: resolver, N: j.attempt, Problem: p})
		}
	default: // ask
		j.problem, j.phase = p, mAsking
		c.decide(Decision{Kind: AskMerge, Cue: j.anchor.pos, MergeID: j.id, Attempt: j.attempt, Problem: p})
	}
}

// ResolverEnded is the end of a resolver's attempt at merge id (recorded
// at cue pos): the merge goes on with what it left, or fails.
func (c *Core) ResolverEnded(id, pos, attempt int, agent *spec.Agent, e End) {
	j := c.merges.job(id)
	current := j != nil && !j.over() && j.resolver == attempt && j.phase == mResolving
	state := AttemptCompleted
	if e.Failed {
		state = AttemptFailed
		if c.stopping || !current || e.Class == "stopped" {
			state = AttemptStopped
		}
	}
	c.decide(Decision{Kind: AttemptEnded, Cue: pos, Target: -1, Attempt: attempt, Agent: agent,
		AttemptState: state, Reason: e.Reason, Class: e.Class, Outputs: e.Outputs})
	if !current {
		return
	}
	j.resolver = 0
	switch state {
	case AttemptCompleted:
		j.phase = mMerging
		c.decide(Decision{Kind: ContinueMerge, Cue: pos, MergeID: id, Attempt: j.attempt, Agent: agent})
	case AttemptStopped:
		c.endMerge(j, AttemptStopped, "stopped", e.Reason)
	default:
		c.endMerge(j, AttemptFailed, ClassMergeConflict, fmt.Sprintf("resolver %s failed (%s): %s; %s", agent.ID, e.Class, e.Reason, j.problem.Reason))
	}
}

// Answers to a merge's question.
const (
	AnswerResolved = "resolved"
	AnswerAbort    = "abort"
)

// MergeAnswered is the person's answer to merge id's question: resolved
// (orch checks and goes on), abort (it fails), anything else asks again.
func (c *Core) MergeAnswered(id, attempt int, answer string) {
	j := c.merges.job(id)
	if j == nil || j.attempt != attempt || j.phase != mAsking {
		return
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case AnswerResolved:
		j.phase = mMerging
		c.decide(Decision{Kind: ContinueMerge, Cue: j.anchor.pos, MergeID: id, Attempt: j.attempt})
	case AnswerAbort:
		c.endMerge(j, AttemptFailed, ClassMergeConflict, "aborted by the person: "+j.problem.Reason)
	default:
		p := *j.problem // asked again, saying why
		p.Reason = fmt.Sprintf("(the answer %q is neither %s nor %s) %s", oneLine(answer), AnswerResolved, AnswerAbort, p.Reason)
		c.decide(Decision{Kind: AskMerge, Cue: j.anchor.pos, MergeID: id, Attempt: j.attempt, Problem: &p})
	}
}

// MergeUnanswered says merge id's question was not answered in time.
func (c *Core) MergeUnanswered(id, attempt int, reason string) {
	if j := c.merges.job(id); j != nil && j.attempt == attempt && j.phase == mAsking {
		c.endMerge(j, AttemptFailed, ClassMergeConflict, reason+": "+j.problem.Reason)
	}
}

// endMerge ends a merge's attempt: the cue goes on, or fails with it; the
// result merge's failure fails the run (ResultFailure).
func (c *Core) endMerge(j *mergeJob, state AttemptState, class, reason string) {
	switch state {
	case AttemptCompleted:
		j.phase = mDone
	case AttemptStopped:
		j.phase = mStopped
	default:
		j.phase, j.failed = mFailed, reason
	}
	c.merges.active--
	d := Decision{Kind: MergeEnded, Cue: j.anchor.pos, MergeID: j.id, Attempt: j.attempt, AttemptState: state, Class: class, Reason: reason, Key: j.commit}
	if j.resolver != 0 || j.phase == mStopped { // the resolver, the git work, the question end with it
		c.decide(Decision{Kind: StopMerge, Cue: j.anchor.pos, MergeID: j.id, Attempt: j.attempt, Reason: reason})
	}
	c.decide(d)
	if j.id == ResultMerge {
		return
	}
	switch j.phase {
	case mDone:
		c.touch(j.anchor)
	case mFailed:
		c.endCue(j.anchor, Failed, MergeAgent+": "+reason)
	}
}

// stopMerge ends the merge of a cue that ends otherwise (stopped, or the
// run stops).
func (c *Core) stopMerge(cr *cue, why string) {
	if j := c.merges.job(cr.pos); j != nil && !j.over() {
		c.endMerge(j, AttemptStopped, "stopped", why)
	}
}

// stopResult ends the result merge when the run stops.
func (c *Core) stopResult(why string) {
	if j := c.merges.job(ResultMerge); j != nil && !j.over() {
		c.endMerge(j, AttemptStopped, "stopped", why)
	}
}

// AskPerson opens a question from orch itself (by, a handle the caller
// compares) straight to the person, due after timeout: a merge's.
func (t *Tasks[W]) AskPerson(now time.Time, by W, timeout time.Duration) Question[W] {
	t.asked++
	q := &question[W]{Question[W]{ID: fmt.Sprintf("q%d", t.asked), Asker: by, From: NoNode, ToNode: NoNode,
		Deadline: now.Add(timeout), seq: t.asked}}
	t.open[q.ID] = q
	return q.Question
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
