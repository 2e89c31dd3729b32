package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// Task is what an agent gets at GO (docs/design.md#the-go-task): inside coord.go for protocol
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
	// (docs/design.md#the-blackboard: "(by researcher)"); Blackboard keeps the values alone, as
	// agents written before it read them.
	BlackboardEntries map[string]protocols.BoardEntry `json:"blackboard_entries,omitempty"`
	// Item is a fan-out item's task's item (for_each), as JSON; ItemName is
	// what its prompt calls it (the for_each's as).
	Item     json.RawMessage `json:"item,omitempty"`
	ItemName string          `json:"-"`
}

// task builds attempt a's task (PlanTask) with the attempt's place in the
// task tree and its workspace; the blackboard snapshot comes later.
func (r *run) task(pos int, a *attempt) *Task {
	t := PlanTask(r.plan, r.core, pos, r.opts.Inputs, a.agent.ID)
	t.RunID, t.Attempt, t.TaskID, t.Workspace = r.id, a.number, a.node.id, a.worktreePath()
	return t
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
		t.Item, t.ItemName = mustJSON(v), name
	}
	return t
}

// withBlackboard fills the task's blackboard snapshot with the board as it
// is now.
func (a *attempt) withBlackboard(t *Task) *Task {
	entries, err := a.r.blackboard()
	return withBoard(t, entries, err)
}

func withBoard(t *Task, entries map[string]record.BlackboardEntry, err error) *Task {
	board := map[string]any{}
	var meta map[string]protocols.BoardEntry
	if err == nil {
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
	}
	t.Blackboard, t.BlackboardEntries = board, meta
	return t
}

// env is the agent's environment: orch's own, the agent's env, and ORCH_*
// variables. Values never reach a command line.
func (a *attempt) env(extra ...string) []string { return append(a.r.agentEnv(a), extra...) }

// agentEnv is the environment of attempt a's processes (see attempt.env).
func (r *run) agentEnv(a *attempt) []string {
	env := append([]string(nil), r.baseEnv(a.agent.ID, a.agent.Env)...)
	env = append(env,
		"ORCH_RUN_ID="+r.id,
		"ORCH_CUE_ID="+a.cue.ID,
		"ORCH_AGENT_ID="+a.agent.ID,
		"ORCH_ATTEMPT="+strconv.Itoa(a.number),
		"ORCH_DB="+r.opts.DBPath,
		"ORCH_ROOT="+r.opts.ProjectRoot,
	)
	if v := r.redact.SecretsEnv(); v != "" {
		env = append(env, v) // for orch bb set inside the agent
	}
	if r.opts.AgentEnv != nil {
		env = append(env, r.opts.AgentEnv(a.cue.ID, a.agent.ID, a.number)...)
	}
	return env
}

// Linux refuses to start a process with one environment string over 128 KiB
// (E2BIG), and bounds the environment and arguments together (a quarter of
// the stack limit, often 2 MiB). So a scalar input goes in ORCH_INPUT_<NAME>
// only up to maxEnvInput bytes, and only while the ORCH_INPUT_* variables
// stay within maxEnvInputs in all; any other is written to a file in the
// attempt's input directory, named by ORCH_INPUT_<NAME>_FILE.
const (
	maxEnvInput  = 32 << 10
	maxEnvInputs = 256 << 10
)

// inputVars are the ORCH_INPUT_<NAME> (or ORCH_INPUT_<NAME>_FILE) variables
// of a plain agent's task: its scalar inputs, so that a shell agent needs no
// JSON parser. Files are written in dir (created when one is needed).
func inputVars(t *Task, dir string) ([]string, error) {
	names := make([]string, 0, len(t.Inputs))
	for k := range t.Inputs {
		names = append(names, k)
	}
	sort.Strings(names)
	var vars []string
	total := 0
	if t.Item != nil { // a fan-out's item, as JSON
		if len(t.Item) <= maxEnvInput {
			total += len("ORCH_ITEM") + len(t.Item)
			vars = append(vars, "ORCH_ITEM="+string(t.Item))
		} else {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
			path := filepath.Join(dir, "ORCH_ITEM")
			if err := os.WriteFile(path, t.Item, 0o600); err != nil {
				return nil, err
			}
			vars = append(vars, "ORCH_ITEM_FILE="+path)
		}
	}
	for _, k := range names {
		switch v := t.Inputs[k].(type) {
		case string, bool, float64, int64, int, json.Number:
			name, value := spec.InputVar(k), spec.EnvValue(v)
			if len(value) <= maxEnvInput && total+len(name)+len(value) <= maxEnvInputs {
				total += len(name) + len(value)
				vars = append(vars, name+"="+value)
				continue
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
			path := filepath.Join(dir, strings.TrimPrefix(name, "ORCH_INPUT_"))
			if err := os.WriteFile(path, []byte(value), 0o600); err != nil {
				return nil, err
			}
			vars = append(vars, name+"_FILE="+path)
		}
	}
	return vars, nil
}

// maxOutputFile bounds what an agent may write to ORCH_OUTPUT.
const maxOutputFile = MaxLine

// parseOutputFile reads ORCH_OUTPUT: one JSON object, or key=value lines
// (with GitHub's key<<DELIMITER heredoc for values over several lines).
func parseOutputFile(data []byte) (map[string]any, error) {
	if len(data) > maxOutputFile {
		return nil, fmt.Errorf("ORCH_OUTPUT is larger than %d bytes", maxOutputFile)
	}
	trimmed := bytes.TrimSpace(data)
	out := map[string]any{}
	if len(trimmed) == 0 {
		return out, nil
	}
	if trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if err := dec.Decode(&out); err != nil {
			return nil, fmt.Errorf("ORCH_OUTPUT is not a JSON object: %v", err)
		}
		if dec.More() {
			return nil, errors.New("ORCH_OUTPUT has text after its JSON object")
		}
		return out, nil
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" {
			continue
		}
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var body []string
			j := i + 1
			for ; j < len(lines) && lines[j] != delim; j++ {
				body = append(body, lines[j])
			}
			if j == len(lines) {
				return nil, fmt.Errorf("ORCH_OUTPUT line %d: no closing %q for %s", i+1, delim, k)
			}
			out[strings.TrimSpace(k)] = strings.Join(body, "\n")
			i = j
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("ORCH_OUTPUT line %d: expected key=value, got %q", i+1, truncate(line, 80))
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// blackboard reads the run's board for a task's snapshot (see hostServices).
func (r *run) blackboard() (map[string]record.BlackboardEntry, error) {
	return r.rec.Blackboard(context.Background(), r.id)
}

// baseEnv is orch's environment plus the agent's env, built once per agent.
func (r *run) baseEnv(agent string, vars map[string]any) []string {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	if env, ok := r.envCache[agent]; ok {
		return env
	}
	env := os.Environ()
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+spec.EnvValue(vars[k]))
	}
	if r.envCache == nil {
		r.envCache = map[string][]string{}
	}
	r.envCache[agent] = env
	return env
}
