package attempt

import (
	"path/filepath"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// Defaults for what a cuelist does not say.
const (
	DefaultMaxParallel = 4
	DefaultAckTimeout  = 5 * time.Second
	// DefaultACPStartTimeout is an ACP agent's ack_timeout by default: real
	// coding CLIs answer initialize in 2 to 5 s, more on a busy machine.
	DefaultACPStartTimeout = 30 * time.Second
	DefaultStandbyTimeout  = time.Minute
	DefaultTimeout         = 30 * time.Minute
	DefaultKillGrace       = 5 * time.Second
	MaxLine                = 1 << 20 // the longest protocol line or output line accepted
)

// AckTimeout is how long an agent has to acknowledge WARNING: the cuelist's
// defaults.ack_timeout, else DefaultAckTimeout, or for an ACP agent, whose
// WARNING starts a coding CLI that takes seconds to answer initialize,
// DefaultACPStartTimeout.
func AckTimeout(cl *spec.Cuelist, agent *spec.Agent) time.Duration {
	def := DefaultAckTimeout
	if agent.Protocol == "acp" {
		def = DefaultACPStartTimeout
	}
	return firstPositive(cl.Defaults.AckTimeout.D(), def)
}

// StandbyTimeout is how long prepare, ready_check or an agent's answer to
// STANDBY may take: the cuelist's defaults.standby_timeout, else
// DefaultStandbyTimeout.
func StandbyTimeout(cl *spec.Cuelist) time.Duration {
	return firstPositive(cl.Defaults.StandbyTimeout.D(), DefaultStandbyTimeout)
}

// GoTimeout is how long an attempt at cue may take in GO: the cue's
// timeout, else its agent's, else the cuelist's defaults.timeout, else
// DefaultTimeout.
func GoTimeout(cl *spec.Cuelist, cue *planner.Cue, agent *spec.Agent) time.Duration {
	return firstPositive(cue.Timeout.D(), agent.Timeout.D(), cl.Defaults.Timeout.D(), DefaultTimeout)
}

// KillGrace is how long an agent's processes get between SIGTERM and
// SIGKILL: set (orch run --kill-grace), else the cuelist's
// defaults.kill_grace, else DefaultKillGrace.
func KillGrace(cl *spec.Cuelist, set time.Duration) time.Duration {
	return firstPositive(set, cl.Defaults.KillGrace.D(), DefaultKillGrace)
}

// MaxParallel is how many cues may be in GO at once: set (orch run
// --max-parallel), else the cuelist's max_parallel, else DefaultMaxParallel.
func MaxParallel(cl *spec.Cuelist, set int) int {
	for _, n := range []int{set, cl.MaxParallel} {
		if n > 0 {
			return n
		}
	}
	return DefaultMaxParallel
}

func firstPositive(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

// Workdir is the agent's workdir, relative to the file that defines
// it: where its processes start (an attempt's, in its worktree when it has
// one).
func Workdir(agent *spec.Agent) string {
	base := agent.Dir()
	if agent.Workdir == "" {
		return base
	}
	if filepath.IsAbs(agent.Workdir) {
		return agent.Workdir
	}
	return filepath.Join(base, agent.Workdir)
}

// Timeouts are how long each phase of an attempt may take, and the grace
// its processes get between SIGTERM and SIGKILL.
type Timeouts struct {
	Ack     time.Duration // to acknowledge WARNING (AckTimeout)
	Standby time.Duration // prepare, ready_check, the answer to STANDBY (StandbyTimeout)
	Go      time.Duration // GO (GoTimeout)
	Grace   time.Duration // the kill grace (KillGrace)
}

// TimeoutsOf are the timeouts of an attempt of agent at cue in a run of
// cuelist cl whose kill grace is grace.
func TimeoutsOf(cl *spec.Cuelist, cue *planner.Cue, agent *spec.Agent, grace time.Duration) Timeouts {
	return Timeouts{Ack: AckTimeout(cl, agent), Standby: StandbyTimeout(cl), Go: GoTimeout(cl, cue, agent), Grace: grace}
}
