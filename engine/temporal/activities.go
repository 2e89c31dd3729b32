package temporal

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// Activities are what a worker runs: it loads cuelists from below Root
// (the project checkout on that machine) and runs the agents' processes.
type Activities struct {
	Root string
	// DBPath is given to agents as ORCH_DB ("" on a machine without the
	// run's store).
	DBPath string
	// GitRemote is the remote worktree agents' branches are shared
	// through ("": the run's); Root is in a clone of it (worktree.go).
	GitRemote string
	// Queue is this worker's own task queue ("": none): a merge's next
	// round goes there, to the worktree it kept (merge.go).
	Queue string
	// SearchMemory searches a run's memory for its agents (nil: memory.search
	// is refused on this worker).
	SearchMemory MemorySearcher
	// Slots are the worker's activity slots, which a phase waiting for its
	// children lends (slots.go; nil: it lends none).
	Slots *Slots

	// Link reaches the workflow of an activity's run (nil: through the
	// worker's Temporal client, the activity's own).
	Link func(ctx context.Context) WorkflowLink

	mu    sync.Mutex
	plans *planCache          // compiled cuelists by path and hash: a worker compiles one once (a few kept)
	pools map[string]*runPool // the runs' agent processes on this worker (agents.go)
	mcp   workerMCP           // orch's MCP tools for the agents (mcp.go)
}

// Plan loads the cuelist at in.Path below Root, checks its hash and returns
// what the workflow builds its plan from.
func (a *Activities) Plan(ctx context.Context, in PlanInput) (*PlanDoc, error) {
	p, err := a.plan(in.Path, in.SpecHash)
	if err != nil {
		return nil, err
	}
	doc := &PlanDoc{Cuelist: p.Cuelist}
	ids := make([]string, 0, len(p.Agents))
	for id := range p.Agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		doc.Agents = append(doc.Agents, p.Agents[id])
	}
	return maskedPlanDoc(p, doc), nil // it goes into the history (secrets.go)
}

// plan compiles (once) the cuelist at path below Root, refusing it when its
// files are not the ones the run was started with.
func (a *Activities) plan(path, hash string) (*planner.Plan, error) {
	key := sha256.Sum256([]byte(path + "\x00" + hash))
	a.mu.Lock()
	if a.plans == nil {
		a.plans = newPlanCache()
	}
	plans := a.plans
	a.mu.Unlock()
	if p := plans.find(key); p != nil {
		return p, nil
	}
	// Compiled outside a.mu: the pools' phases need not wait for it.
	if filepath.IsAbs(path) || strings.HasPrefix(filepath.Clean(path), "..") {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("cuelist path %q must be relative to the worker's --root", path), "bad-path", nil)
	}
	set, p, diags, err := planner.Compile(filepath.Join(a.Root, path), "", spec.LoadOptions{Root: a.Root})
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("loading %s below %s: %v", path, a.Root, err), "load", err)
	}
	if p == nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("cuelist %s has errors: %v", path, diags), "invalid", nil)
	}
	if got := set.HashBelow(a.Root); hash != "" && got != hash {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("cuelist %s below %s is not the one the run started with (spec hash %s, the run's %s): check out the same files at the same path on every worker", path, a.Root, got, hash), "spec-changed", nil)
	}
	return plans.add(key, p), nil
}

// attempt finds the cue and agent of an activity's attempt.
func (a *Activities) attempt(in AttemptInput) (*planner.Plan, *planner.Cue, *spec.Agent, error) {
	p, err := a.plan(in.Path, in.SpecHash)
	if err != nil {
		return nil, nil, nil, err
	}
	ag := p.Agents[in.Agent]
	if in.Child != nil && ag != nil { // a handoff's receiver or a spawned agent: its own cue, never scheduled
		return p, &planner.Cue{Cue: &spec.Cue{ID: in.Cue, Agents: []string{ag.ID}}}, ag, nil
	}
	id, _, _ := strings.Cut(in.Cue, "[") // a fan-out's item, CUE[0], is its cue's
	for _, c := range p.Order {
		if c.ID == id && ag != nil && (id == in.Cue || c.ForEach != nil) {
			return p, c, ag, nil
		}
	}
	return nil, nil, nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("cuelist %s has no cue %s with agent %s", in.Path, in.Cue, in.Agent), "unknown", nil)
}

// Warning runs the agent's prepare (WARNING).
func (a *Activities) Warning(ctx context.Context, in AttemptInput) (*AttemptResult, error) {
	p, c, ag, err := a.attempt(in)
	if err != nil {
		return nil, err
	}
	return handedBack(maskedResult(p, a.step(ctx, p, c, ag, in, phaseWarning, nil)))
}

// Standby runs the agent's ready_check (STANDBY).
func (a *Activities) Standby(ctx context.Context, in AttemptInput) (*AttemptResult, error) {
	p, c, ag, err := a.attempt(in)
	if err != nil {
		return nil, err
	}
	return handedBack(maskedResult(p, a.step(ctx, p, c, ag, in, phaseStandby, nil)))
}

// Go runs the agent's command with the task (GO).
func (a *Activities) Go(ctx context.Context, in AttemptInput) (*AttemptResult, error) {
	p, c, ag, err := a.attempt(in)
	if err != nil {
		return nil, err
	}
	// The task's recorded values get their secrets back; the result goes
	// into the history masked (secrets.go).
	return handedBack(maskedResult(p, a.step(ctx, p, c, ag, in, phaseGo, restoredTask(p, in.Task))))
}

// handedBack turns a phase a stopping worker gave back into the activity's
// error: the workflow dispatches it again (or interrupts a GO that is not
// idempotent), as for a lost worker.
func handedBack(res *AttemptResult) (*AttemptResult, error) {
	if res.Failed && res.Class == HandedBack {
		return nil, temporal.NewApplicationError(res.Reason, HandedBack)
	}
	return res, nil
}
