package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// DefaultTailLines is how many of its last output lines a failed attempt
// shows unless asked otherwise (orch run and orch status --tail-lines,
// orch serve's run).
const DefaultTailLines = 20

// StatusRequest asks for one run's status.
type StatusRequest struct {
	Run string // an id, a unique prefix of one, or "last"
	// TailLines is how many of its last output lines each failed attempt
	// shows (0: none).
	TailLines int
}

// RunStatus is one run in orch status RUN --output json (docs/design.md#status-json): its
// cues with their attempts, questions, escalations, conflicts, what was
// used, its worktree branches and result.
type RunStatus struct {
	ID        string      `json:"id"`
	Cuelist   string      `json:"cuelist"`
	State     string      `json:"state"`
	Reason    string      `json:"reason,omitempty"`
	StartedAt *string     `json:"started_at"`
	EndedAt   *string     `json:"ended_at"`
	Inputs    any         `json:"inputs"`
	Cues      []CueStatus `json:"cues"`
	Questions []Question  `json:"questions"`
	// Escalations are the high and critical ones; acknowledged_at is null
	// until the person acknowledges one (orch ack).
	Escalations []Escalation          `json:"escalations"`
	Conflicts   []record.ConflictData `json:"conflicts"`
	Credits     float64               `json:"credits"`
	Used
	Worktrees []Worktree `json:"worktrees"` // the branches the run's attempts worked on (kept after the run)
	// Result is where a completed run's worktree branches were merged.
	Result  *record.ResultBranch `json:"result,omitempty"`
	Owner   *Owner               `json:"owner,omitempty"`
	Waiting []string             `json:"waiting_for_go,omitempty"`
	Counts  map[string]int       `json:"counts"`

	// Detail is the store's, for renderers (times as times); Cues[i] is
	// Detail.Cues[i], and its Attempts[j] is theirs.
	Detail *store.RunDetail `json:"-"`
}

// Used is what the agents reported they used (their credits are shown apart).
type Used struct {
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
}

func usedOf(u record.Usage) Used {
	return Used{CostUSD: u.CostUSD, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
}

// Worktree is a git branch one of the run's attempts worked on.
type Worktree struct {
	Cue     string `json:"cue"`
	Agent   string `json:"agent"`
	Attempt int    `json:"attempt"`
	Branch  string `json:"branch"`
	Commit  string `json:"commit,omitempty"` // a completed attempt's
}

// Owner is the process that runs a run.
type Owner struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
}

// CueStatus is one cue (or child task, or fan-out item) of a RunStatus.
type CueStatus struct {
	ID        string          `json:"id"`
	State     string          `json:"state"`
	Reason    string          `json:"reason,omitempty"`
	Agents    []string        `json:"agents"`
	After     []string        `json:"after,omitempty"` // the cues it waits for: the run's DAG (none recorded before schema 6)
	WarningAt *string         `json:"warning_at"`
	StandbyAt *string         `json:"standby_at"`
	GoAt      *string         `json:"go_at"`
	EndedAt   *string         `json:"ended_at"`
	Outputs   map[string]any  `json:"outputs,omitempty"`
	Attempts  []AttemptStatus `json:"attempts"`
	Parent    string          `json:"parent,omitempty"` // a child task's parent (handoff or spawn)
	Kind      string          `json:"kind,omitempty"`   // handoff or spawn
	Depth     int             `json:"depth"`            // 0 for the plan's cues
	TaskRef   string          `json:"task_ref,omitempty"`
	Credits   float64         `json:"credits"`
	Used
	Reported *Reported `json:"reported,omitempty"` // the state its agent last reported (status.report)
	Items    *Items    `json:"items,omitempty"`    // a fan-out's (for_each) items: each is a cue with kind item
}

// AttemptStatus is one attempt of a CueStatus.
type AttemptStatus struct {
	Number    int     `json:"number"`
	Agent     string  `json:"agent"`
	State     string  `json:"state"`
	Reason    string  `json:"reason,omitempty"`
	Class     string  `json:"class,omitempty"`
	ExitCode  *int    `json:"exit_code,omitempty"`
	StartedAt *string `json:"started_at"`
	EndedAt   *string `json:"ended_at"`
	// Tail is a failed attempt's last lines of output (TailLines).
	Tail []string `json:"tail,omitempty"`
	// Notes are the run's notes about it (a retry to come, its worker
	// lost and its GO dispatched again), in order.
	Notes   []string `json:"notes,omitempty"`
	Credits float64  `json:"credits"`
	Used
	WorktreeBranch string `json:"worktree_branch,omitempty"`
	WorktreeCommit string `json:"worktree_commit,omitempty"`
}

// Status reads one run's status.
func (c *Controller) Status(ctx context.Context, req StatusRequest) (*RunStatus, error) {
	var out *RunStatus
	err := c.reading(ctx, req.Run, func(db *store.DB, id string) (err error) {
		c.catchUp(ctx, db, id)
		out, err = runStatus(ctx, db, id, req.TailLines)
		return err
	})
	return out, err
}

func runStatus(ctx context.Context, db *store.DB, id string, tailLines int) (*RunStatus, error) {
	r, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	reported, err := reportedStates(ctx, db, r.ID)
	if err != nil {
		return nil, err
	}
	result, err := db.RunResult(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	out := &RunStatus{ID: r.ID, Cuelist: r.Cuelist, State: string(r.State), Reason: r.Reason, StartedAt: timeJSON(r.StartedAt),
		EndedAt: timeJSON(r.EndedAt), Inputs: r.Inputs, Questions: questionsOf(r.Questions), Escalations: escalationsOf(r.Escalations), Conflicts: r.Conflicts,
		Credits: r.Credits, Used: usedOf(r.Used), Worktrees: []Worktree{}, Result: result, Counts: map[string]int{}, Detail: r}
	if out.Conflicts == nil {
		out.Conflicts = []record.ConflictData{}
	}
	if r.OwnerPID != 0 {
		out.Owner = &Owner{PID: r.OwnerPID, Host: r.OwnerHost}
	}
	fans := FanOuts(r.Cues)
	notes, err := attemptNotes(ctx, db, r.ID)
	if err != nil {
		return nil, err
	}
	for _, c := range r.Cues {
		cj := CueStatus{ID: c.ID, Parent: c.Parent, Kind: c.Kind, Depth: c.Depth, TaskRef: c.TaskRef, State: string(c.State), Reason: c.Reason, Agents: c.Agents, After: c.After, WarningAt: timeJSON(c.WarningAt),
			StandbyAt: timeJSON(c.StandbyAt), GoAt: timeJSON(c.GoAt), EndedAt: timeJSON(c.EndedAt), Outputs: c.Outputs, Attempts: []AttemptStatus{},
			Credits: c.Used().Credits, Used: usedOf(c.Used()), Reported: reported[c.ID], Items: fans[c.ID]}
		for _, a := range c.Attempts {
			aj := AttemptStatus{Number: a.Number, Agent: a.Agent, State: string(a.State), Reason: a.Reason,
				Class: a.Class, ExitCode: a.ExitCode, StartedAt: timeJSON(a.StartedAt), EndedAt: timeJSON(a.EndedAt),
				Credits: a.Used.Credits, Used: usedOf(a.Used), WorktreeBranch: a.WorktreeBranch, WorktreeCommit: a.WorktreeCommit,
				Notes: notes[attemptKey{c.ID, a.Agent, a.Number}]}
			if a.WorktreeBranch != "" {
				out.Worktrees = append(out.Worktrees, Worktree{Cue: c.ID, Agent: a.Agent, Attempt: a.Number, Branch: a.WorktreeBranch, Commit: a.WorktreeCommit})
			}
			if a.State == record.AttemptFailed {
				if aj.Tail, err = db.AttemptTail(ctx, r.ID, c.ID, a.Agent, a.Number, tailLines); err != nil {
					return nil, err
				}
			}
			cj.Attempts = append(cj.Attempts, aj)
		}
		out.Cues = append(out.Cues, cj)
		if c.Parent == "" { // the counts are of the plan's cues, as in orch status
			out.Counts[string(c.State)]++
		}
	}
	return out, nil
}

// Halted says whether the run is not moving on by itself: over, paused
// for a person, or interrupted (its owner died).
func (s *RunStatus) Halted() bool {
	st := record.RunState(s.State)
	return st.Ended() || st == record.RunPaused || st == record.RunInterrupted
}

// WriteJSON writes the status as WriteJSON does, a cue at a time: a run
// of 10,000 cues is megabytes of JSON, and indenting it whole held several
// copies of it at once (orch serve's memory).
func (s *RunStatus) WriteJSON(w io.Writer) error {
	out := *s
	cues := out.Cues
	if len(cues) == 0 {
		return WriteJSON(w, out)
	}
	out.Cues = []CueStatus{}
	head, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	const mark = "\n  \"cues\": []"
	before, after, ok := bytes.Cut(head, []byte(mark))
	if !ok {
		return fmt.Errorf("writing run %s: no cues in its JSON", out.ID)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(before)
	bw.WriteString("\n  \"cues\": [")
	for i, c := range cues {
		b, err := json.MarshalIndent(c, "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(b)
	}
	bw.WriteString("\n  ]")
	bw.Write(after)
	bw.WriteByte('\n')
	return bw.Flush()
}

// Reported is the state an agent last reported for a cue or task
// (status.report, status.update).
type Reported struct {
	Agent    string  `json:"agent"`
	State    string  `json:"state"`
	Progress float64 `json:"progress,omitempty"` // 0..1
	Detail   string  `json:"detail,omitempty"`
	At       *string `json:"at"`
}

// reportedStates is the last reported state of each cue or task of a run.
func reportedStates(ctx context.Context, db *store.DB, runID string) (map[string]*Reported, error) {
	events, err := db.EventsOfType(ctx, runID, record.EvAgentStatus)
	if err != nil {
		return nil, err
	}
	out := map[string]*Reported{}
	for _, e := range events {
		d, _ := e.Data.(record.StatusData)
		out[e.Cue] = &Reported{Agent: e.Agent, State: e.State, Progress: d.Progress, Detail: d.Detail, At: timeJSON(e.At)}
	}
	return out, nil
}
