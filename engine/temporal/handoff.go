package temporal

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/spec"
)

// An agent's task.handoff and task.spawn on a worker (the MCP handoff and
// spawn tools too): what only the worker can check (the agent's tools, the
// handoff spec's rules, whose artifacts are files below --root) is checked
// here; the workflow checks the rest (the task tree's depth and cycles, the
// inputs a spawned agent inherits), starts the child and answers
// (children.go).

// denied says why the agent may not use a tool family at its task's depth
// ("" when it may).
func (hub hubLink) denied(family string) string {
	if hub.tools.Allows(family, hub.depth) {
		return ""
	}
	return fmt.Sprintf("agent %s may not use %q at handoff depth %d (its effective tools: %v)", hub.asker.Agent, family, hub.depth, hub.tools.At(hub.depth))
}

// handoff asks the workflow for the handoff off the attempt's goroutine
// (the agent goes on; the child's end comes back as handoff.result).
func (h *stepHost) handoff(hub hubLink, peer driver.Peer, msg protocols.Message, b protocols.TaskHandoff) {
	go func() {
		res := handOff(hub, b)
		if res.Status == "refused" {
			h.Note("handoff from %s to %s refused: %s", hub.asker.Agent, b.ToAgent, res.Reason)
		}
		_ = peer.Send(protocols.Reply(msg, res))
	}()
}

// handOff checks a task.handoff like a handoff spec, then has the workflow
// run the receiver as the sender's child and waits for its end. A refusal
// is a handoff.result too, with the reason.
func handOff(hub hubLink, b protocols.TaskHandoff) protocols.HandoffResult {
	refused := func(why string) protocols.HandoffResult {
		return protocols.HandoffResult{TaskID: b.TaskID, Status: "refused", Reason: why}
	}
	var problems []string
	if why := hub.denied("handoff"); why != "" {
		problems = append(problems, why)
	}
	if b.FromAgent != "" && b.FromAgent != hub.asker.Agent {
		problems = append(problems, fmt.Sprintf("from_agent is %q, but the sender is agent %s", b.FromAgent, hub.asker.Agent))
	}
	problems = append(problems, hub.specProblems(b.ToAgent, b.HandoffContext)...)
	if len(problems) > 0 {
		return refused(strings.Join(problems, "; "))
	}
	var res ChildDone
	hub.loans.add() // the sender waits for its child: its slot is the child's meanwhile
	defer hub.loans.done()
	if err := hub.link.Update(hub.ctx, UpdateChild, ChildAsk{Asker: hub.asker, Kind: "handoff", To: b.ToAgent, TaskRef: b.TaskID, Context: b.HandoffContext}, &res); err != nil {
		return refused("the run's workflow could not be reached: " + err.Error())
	}
	if res.Refused != "" {
		return refused(res.Refused)
	}
	return protocols.HandoffResult{TaskID: b.TaskID, Status: res.Status, Outputs: res.Outputs, Reason: res.Reason}
}

// specProblems are a handoff's problems by its sender's spec: a receiver
// in its handoff_to, a handoff_context with what the receiver requires,
// artifacts inside the project whose hashes match.
func (hub hubLink) specProblems(toID string, ctx map[string]any) []string {
	from, to := hub.plan.Agents[hub.asker.Agent], hub.plan.Agents[toID]
	var root *os.Root
	if hub.root != "" {
		if r, err := os.OpenRoot(hub.root); err == nil {
			defer r.Close()
			root = r
		}
	}
	found := spec.HandoffProblems(from, toID, to, ctx, root)
	notAllowed := slices.ContainsFunc(found, func(p spec.Problem) bool { return p.Code == "handoff-not-allowed" })
	var out []string
	for _, p := range found {
		if p.Code == "unknown-agent" && notAllowed {
			continue // "not in its handoff_to" says it better
		}
		out = append(out, p.Message)
	}
	return out
}

// spawnChild has the workflow start a child without waiting: spawn.accepted
// with its task id, or a protocol.error with the reason. The child's
// task.announce comes through the attempt's inbox when it ends.
func spawnChild(hub hubLink, b protocols.TaskSpawn) protocols.Body {
	var problems []string
	if why := hub.denied("spawn"); why != "" {
		problems = append(problems, why)
	}
	if from := hub.plan.Agents[hub.asker.Agent]; from == nil || !slices.Contains(from.HandoffTo, b.Agent) {
		allowed := "it lists none"
		if from != nil && len(from.HandoffTo) > 0 {
			allowed = "it allows " + strings.Join(from.HandoffTo, ", ")
		}
		problems = append(problems, fmt.Sprintf("agent %s may not spawn %s: not in its handoff_to (%s)", hub.asker.Agent, b.Agent, allowed))
	}
	refused := func(why string) protocols.Body {
		return protocols.ProtocolError{Reason: fmt.Sprintf("task.spawn of %s refused: %s", b.Agent, why)}
	}
	if len(problems) > 0 {
		return refused(strings.Join(problems, "; "))
	}
	var res ChildDone
	hub.loans.add() // the child's, should its parent wait for its announce
	if err := hub.link.Update(hub.ctx, UpdateChild, ChildAsk{Asker: hub.asker, Kind: "spawn", To: b.Agent, Inputs: b.Inputs}, &res); err != nil {
		hub.loans.done()
		return refused("the run's workflow could not be reached: " + err.Error())
	}
	if res.Refused != "" {
		hub.loans.done()
		return refused(res.Refused)
	}
	hub.loans.keep(res.TaskID) // until the child is announced to its parent
	return protocols.SpawnAccepted{TaskID: res.TaskID}
}
