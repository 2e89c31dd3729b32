package runner

import (
	"fmt"
	"sort"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/spec"
)

// driver takes one attempt of one kind of agent through its phases. Adding
// a protocol is a file with its driver and its tests that registers it
// (registerDriver, in an init func): neither the scheduler core nor the
// loop changes.
type driver interface {
	warning(a *attemptRun) *attempt.Failure
	standby(a *attemptRun) *attempt.Failure
	work(a *attemptRun, t *attempt.Task) (map[string]any, *attempt.Failure)
	// close stops whatever is still running and sweeps the process group;
	// it returns the pid and exit status of the GO process, when there was one.
	close(a *attemptRun) (pid int, exit *int)
}

// goPreparer is a driver that gets ready for GO while it waits for it.
type goPreparer interface{ prepareGo(a *attemptRun) }

func prepareGo(d driver, a *attemptRun) {
	if p, ok := d.(goPreparer); ok {
		p.prepareGo(a)
	}
}

// driverKind describes the driver of one protocol.
type driverKind struct {
	new func() driver
	// speaks: the agent reads orch's messages (coord.warning, coord.standby
	// and coord.go are recorded with the decisions that send them; it is
	// told of conflicts; in GO it can receive messages and questions).
	speaks bool
	// trivial: the agent has nothing to do at WARNING and STANDBY, so the
	// scheduler takes its attempt through them as soon as it is recorded.
	// Nil: never.
	trivial func(*spec.Agent) bool
}

var drivers = map[string]driverKind{}

// registerDriver makes protocol's agents run with k.
func registerDriver(protocol string, k driverKind) { drivers[protocol] = k }

// CheckDrivers refuses a plan with an agent whose protocol orch knows (the
// spec accepts it) but has no driver for yet: before any cue starts, rather
// than when its turn comes.
func CheckDrivers(p *planner.Plan) error {
	ids := make([]string, 0, len(p.Agents))
	for id := range p.Agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := p.Agents[id]
		if _, ok := drivers[a.Protocol]; !ok {
			return fmt.Errorf("%s: agent %q uses protocol: %s, which orch cannot run yet (it runs protocol: none, jsonl, acp, claude-code and codex agents)", a.At("/protocol"), id, a.Protocol)
		}
	}
	return nil
}

// kindOf is the driver of the agent's protocol (none when it says none:
// spec checks that the protocol is one orch knows).
func kindOf(a *spec.Agent) driverKind {
	if k, ok := drivers[a.Protocol]; ok {
		return k
	}
	return drivers["none"]
}

// speaks reports whether the agent reads orch's messages (see driverKind).
func speaks(a *spec.Agent) bool { return kindOf(a).speaks }

// trivial reports whether the agent has nothing to do at WARNING and
// STANDBY (see driverKind).
func trivial(a *spec.Agent) bool {
	k := kindOf(a)
	return k.trivial != nil && k.trivial(a)
}
