package attempt

import (
	"encoding/json"
	"sort"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// Task is what an agent gets at GO (DESIGN §4): inside coord.go for protocol
// agents, as JSON on stdin for plain processes.
type Task struct {
	RunID          string         `json:"run_id"`
	CueID          string         `json:"cue_id"`
	AgentID        string         `json:"agent_id"`
	Attempt        int            `json:"attempt"`
	Inputs         map[string]any `json:"inputs"`
	Blackboard     map[string]any `json:"blackboard"`
	Tools          []string       `json:"tools"`
	HandoffContext map[string]any `json:"handoff_context,omitempty"`
	// TaskID is the task's id in the run's tree: the cue id for a cue's own
	// agent, the parent's id + "/" + n for a handoff or spawn child, whose
	// ParentTaskID and Depth (1 under a cue's agent) say where it stands.
	TaskID       string `json:"task_id"`
	ParentTaskID string `json:"parent_task_id,omitempty"`
	Depth        int    `json:"depth,omitempty"`
	// Workspace is the attempt's git worktree (workspace: worktree): a
	// protocol agent's process serves several attempts, each works there.
	Workspace string `json:"workspace,omitempty"`
	// BlackboardEntries is the snapshot with each key's version and author
	// (seed 004: "(by researcher)"); Blackboard keeps the values alone, as
	// agents written before it read them.
	BlackboardEntries map[string]protocols.BoardEntry `json:"blackboard_entries,omitempty"`
	// Item is a fan-out item's task's item (for_each), as JSON; ItemName is
	// what its prompt calls it (the for_each's as).
	Item     json.RawMessage `json:"item,omitempty"`
	ItemName string          `json:"-"`
}

// PlanTask builds the GO task of plan cue pos for agent: the run's inputs,
// the outputs of every cue the cue depends on (directly or not, in plan
// order, later ones winning), then the cue's own inputs; the agent's tools.
// Every engine builds its tasks with it (engine/temporal too), so an agent
// is given the same task whichever runs it.
func PlanTask(p *planner.Plan, core *sched.Core, pos int, runInputs map[string]any, agent string) *Task {
	c := core.Cue(pos) // a plan cue, or a fan-out's item (whose ancestors are its for_each cue's)
	inputs := map[string]any{}
	for k, v := range runInputs {
		inputs[k] = v
	}
	var producers []int
	p.EachAncestorIn(c, core.WithOutputs(), func(anc *planner.Cue) { producers = append(producers, core.Pos(anc.ID)) })
	sort.Ints(producers)
	for _, i := range producers { // in plan order: a later cue's output wins
		for k, v := range core.Outputs(i) {
			inputs[k] = v
		}
	}
	for k, v := range c.Inputs {
		inputs[k] = v
	}
	tools := []string{}
	for _, t := range p.Tools {
		if t.Agent == agent && t.At(0) != nil {
			tools = t.At(0)
		}
	}
	t := &Task{CueID: c.ID, AgentID: agent, Inputs: inputs, Tools: tools}
	if v, name, ok := core.Item(pos); ok {
		t.Item, _ = json.Marshal(v) // an item is a JSON value: it encodes
		t.ItemName = name
	}
	return t
}

// WithBoard fills the task's blackboard snapshot from entries (the board
// as it is now; nil: none could be read).
func WithBoard(t *Task, entries map[string]record.BlackboardEntry) *Task {
	board := map[string]any{}
	var meta map[string]protocols.BoardEntry
	for k, e := range entries {
		var v any
		if json.Unmarshal(e.Value, &v) == nil {
			board[k] = v
			if meta == nil {
				meta = map[string]protocols.BoardEntry{}
			}
			meta[k] = protocols.BoardEntry{Value: v, Version: e.Version, Author: e.Author}
		}
	}
	t.Blackboard, t.BlackboardEntries = board, meta
	return t
}

// ProtocolTask is the task as coord.go carries it.
func ProtocolTask(t *Task) protocols.Task {
	return protocols.Task{RunID: t.RunID, CueID: t.CueID, AgentID: t.AgentID, Attempt: t.Attempt, Inputs: t.Inputs,
		Blackboard: t.Blackboard, Tools: t.Tools, HandoffContext: t.HandoffContext,
		TaskID: t.TaskID, ParentTaskID: t.ParentTaskID, Depth: t.Depth, Workspace: t.Workspace,
		BlackboardEntries: t.BlackboardEntries, Item: t.Item}
}
