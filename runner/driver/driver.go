// Package driver takes one attempt of an agent through the cue protocol,
// WARNING, STANDBY and GO, one driver per protocol: plain processes
// (protocol: none), jsonl agents, ACP agents, and the headless coding CLIs
// (claude-code, codex). Adding a protocol is a file here with its driver
// and its registration (Register, in an init func): neither the scheduler
// core nor an engine changes.
//
// A driver sees an attempt through a small value (Attempt: who, where, how
// long) and the services of its engine behind a narrow interface (Host:
// the environment, logging a line, a note, usage, a question for the
// person, recording a message, serving an agent's request, the stop); it
// never sees the run. The agents' processes that outlive an attempt (a
// jsonl agent's, an ACP agent's: one per agent, serving attempt after
// attempt) are the run's Agents, closed when the run ends.
//
// The local runner is an engine that drives every protocol; engine/temporal
// drives them too, with the same drivers, in its workers.
package driver

import (
	"fmt"
	"sort"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/spec"
)

// Driver takes one attempt of one kind of agent through its phases, each
// on the attempt's own goroutine. A failure says how the attempt ends.
type Driver interface {
	Warning(a *Attempt) *attempt.Failure
	Standby(a *Attempt) *attempt.Failure
	Work(a *Attempt, t *attempt.Task) (map[string]any, *attempt.Failure)
	// Close stops whatever is still running and sweeps the process group;
	// it returns the pid and exit status of the GO process, when there was
	// one.
	Close(a *Attempt) (pid int, exit *int)
}

// GoPreparer is a driver that gets ready for GO while it waits for it.
type GoPreparer interface{ PrepareGo(a *Attempt) }

// PrepareGo lets d get ready for GO, if it does.
func PrepareGo(d Driver, a *Attempt) {
	if p, ok := d.(GoPreparer); ok {
		p.PrepareGo(a)
	}
}

// Kind describes the driver of one protocol.
type Kind struct {
	New func() Driver
	// Speaks: the agent reads orch's messages (coord.warning, coord.standby
	// and coord.go are recorded with the decisions that send them; it is
	// told of conflicts; in GO it can receive messages and questions).
	Speaks bool
	// Trivial: the agent has nothing to do at WARNING and STANDBY, so the
	// scheduler takes its attempt through them as soon as it is recorded.
	// Nil: never.
	Trivial func(*spec.Agent) bool
}

var kinds = map[string]Kind{}

// Register makes protocol's agents run with k (from an init func).
func Register(protocol string, k Kind) { kinds[protocol] = k }

// Check refuses a plan with an agent whose protocol orch knows (the spec
// accepts it) but has no driver for yet: before any cue starts, rather
// than when its turn comes.
func Check(p *planner.Plan) error {
	ids := make([]string, 0, len(p.Agents))
	for id := range p.Agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := p.Agents[id]
		if _, ok := kinds[a.Protocol]; !ok {
			return fmt.Errorf("%s: agent %q uses protocol: %s, which orch cannot run yet (it runs protocol: none, jsonl, acp, claude-code and codex agents)", a.At("/protocol"), id, a.Protocol)
		}
	}
	return nil
}

// Of is the driver of the agent's protocol (none when it says none: spec
// checks that the protocol is one orch knows).
func Of(a *spec.Agent) Kind {
	if k, ok := kinds[a.Protocol]; ok {
		return k
	}
	return kinds["none"]
}

// Speaks reports whether the agent reads orch's messages (see Kind).
func Speaks(a *spec.Agent) bool { return Of(a).Speaks }

// Trivial reports whether the agent has nothing to do at WARNING and
// STANDBY (see Kind).
func Trivial(a *spec.Agent) bool {
	k := Of(a)
	return k.Trivial != nil && k.Trivial(a)
}
