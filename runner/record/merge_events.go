package record

import "github.com/orch-cli/orch/runner/redact"

// EvMerge records a step of a merge of worktree branches: a cue's, before
// it starts from them, or the run's result (Cue: the cue it is recorded at,
// Result set). Agent and Attempt are the merge's own attempt (agent
// sched.MergeAgent). State says the step: started, kept (what a worktree
// held when an earlier owner died, kept on a branch), merged, conflict,
// resolving (a resolver at work), checking (a resolution), resolved, verify-failed, verified, completed,
// failed or stopped; Reason says more. Data: MergeData.
const EvMerge = "merge"

// The states of EvMerge.
const (
	MergeStarted      = "started"
	MergeKept         = "kept"
	MergeMerged       = "merged"
	MergeConflict     = "conflict"
	MergeResolving    = "resolving"
	MergeChecking     = "checking"
	MergeResolved     = "resolved"
	MergeVerifyFailed = "verify-failed"
	MergeVerified     = "verified"
	MergeCompleted    = "completed"
	MergeFailed       = "failed"
	MergeStopped      = "stopped"
)

// MergeData is the data of EvMerge.
type MergeData struct {
	Branch  string        `json:"branch"`            // orch/<run>/<cue>/merge, or orch/<run>/result
	Path    string        `json:"path,omitempty"`    // its worktree
	Sources []MergeSource `json:"sources,omitempty"` // started: the branches to merge, in order
	Task    string        `json:"task,omitempty"`    // merged, conflict: the task whose branch it was
	Commit  string        `json:"commit,omitempty"`  // merged, resolved, completed: the commit; kept: the one kept
	Kept    string        `json:"kept,omitempty"`    // kept: the branch it is kept on
	Files   []string      `json:"files,omitempty"`   // conflict: the files in conflict
	Tasks   []string      `json:"tasks,omitempty"`   // conflict: whose branches collided
	Output  string        `json:"output,omitempty"`  // verify-failed: the command's last lines
	Result  *ResultBranch `json:"result,omitempty"`  // completed: the run's result
}

// MergeSource is one branch a merge takes in (sched.MergeSource).
type MergeSource struct {
	Task   string `json:"task"`
	Branch string `json:"branch"`
	Commit string `json:"commit,omitempty"`
}

// ResultBranch is the run's result: the branch its worktree branches were
// merged into, and how far it is ahead of the commit the run started from.
type ResultBranch struct {
	Branch     string `json:"branch"`      // orch/<run>/result
	Commit     string `json:"commit"`      // its commit
	Base       string `json:"base"`        // the branch checked out when the run started (else the commit, short)
	BaseCommit string `json:"base_commit"` // the commit HEAD was at then
	Ahead      int    `json:"ahead"`       // commits on Branch not on BaseCommit
}

// EventType implements EventData.
func (MergeData) EventType() string { return EvMerge }

func (p MergeData) redacted(d *redact.Redactor) EventData {
	p.Branch, p.Path, p.Task, p.Commit, p.Kept, p.Output = d.Text(p.Branch), d.Text(p.Path), d.Text(p.Task), d.Text(p.Commit), d.Text(p.Kept), d.Text(p.Output)
	p.Files, p.Tasks = d.Texts(p.Files), d.Texts(p.Tasks)
	if len(p.Sources) > 0 {
		sources := make([]MergeSource, len(p.Sources))
		for i, s := range p.Sources {
			sources[i] = MergeSource{Task: d.Text(s.Task), Branch: d.Text(s.Branch), Commit: d.Text(s.Commit)}
		}
		p.Sources = sources
	}
	if p.Result != nil {
		r := *p.Result
		r.Branch, r.Commit, r.Base, r.BaseCommit = d.Text(r.Branch), d.Text(r.Commit), d.Text(r.Base), d.Text(r.BaseCommit)
		p.Result = &r
	}
	return p
}
