package sched

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// Lookup is what the core reads from the world, through the runner.
type Lookup interface {
	// Conditions returns the blackboard values of keys (absent: not set).
	// An error means the board could not be read: the run is ending.
	Conditions(cue string, keys []string) (map[string]json.RawMessage, error)
	// CooldownUntil returns when the agent's cooldown ends (zero: none
	// known).
	CooldownUntil(agent string) time.Time
}

// Config describes the run the core schedules.
type Config struct {
	Plan     *planner.Plan
	RunID    string // for the reasons that tell a person what to type
	Parallel int    // max_parallel: cues prepared at once, and cues in GO at once
	CanAsk   bool   // a person can be asked for a manual cue's GO (else orch go)
	Lookup   Lookup
	// Trivial reports whether an agent has nothing to do at WARNING and
	// STANDBY (its driver says): its attempt goes through them as soon as
	// it is recorded. Nil: none has.
	Trivial func(*spec.Agent) bool
	// Jitter returns a random duration in [0, n]; nil: math/rand.
	Jitter func(n time.Duration) time.Duration
	// LastBranchOnly: a cue whose several agents worked in worktrees passes
	// on its last agent's branch only (Temporal runs started before every
	// branch reached the merge: branches.go).
	LastBranchOnly bool
}

// Core schedules one run. It belongs to one goroutine.
type Core struct {
	cfg   Config
	plan  *planner.Plan
	cues  []*cue // in plan order
	byID  map[string]*cue
	out   []Decision
	began time.Time // when this process started or continued the run (max_duration)

	prepared int // cues in WARNING or STANDBY
	inGo     int // cues in GO

	touched  *cueQueue // cues to step in the next advance
	waitWarn *cueQueue // cues ready for WARNING but out of budget
	waitGo   *cueQueue // cues standing by for a free GO slot
	live     map[*cue]bool
	wakeAt   time.Time
	sleepers map[*cue]bool // cues to look at again at wakeAt

	finals     int  // cues in a final state
	unapproved int  // manual cues not yet approved nor ended
	asking     int  // cues whose GO a person is being asked for
	stopping   bool // attempts ending now were stopped, not failed
	exhausted  bool // out of a limit: no new GO
	limit      *Limit
	credits    float64 // the run's credits so far (status.usage)
	costUSD    float64 // the run's cost so far, as its agents reported it
	broken     bool    // the run cannot be recorded: decide nothing more
	held       bool    // no cue goes into WARNING (carry.go)

	withOutputs planner.CueSet // completed cues that produced outputs
	locks       locks
	// cooldowns are the ends of the cooldowns this run decided or cleared
	// (zero: cleared), which the store may not have yet: they win over
	// Lookup.CooldownUntil.
	cooldowns map[string]time.Time
	merges    merges // worktree branches merged at fan-in and into the result (merge.go)
}

// cue is one cue's progress in the run.
type cue struct {
	pos      int
	spec     *planner.Cue
	state    State
	reason   string
	targets  []target
	attempts int // highest attempt number used (attempts continue across agents and resumes)
	approved bool
	asking   bool // a person is being asked for its GO
	declined bool // a person said no: it waits for orch go
	outputs  map[string]any
	holding  []Subject // what the cue holds while in GO
	warnedAt time.Time // when it went into WARNING (this process)
	goAt     time.Time // when it went into GO (this process)

	fan    *fanOut // a for_each cue, once expanded (fanout.go)
	parent *cue    // an item of a fan-out: its for_each cue
	item   int     // an item: its index in the list
	// itemAttempts: a for_each cue expanding afresh, the attempt numbers
	// its earlier items used (by id), which its new ones continue.
	itemAttempts map[string]int
	// itemIDs: a for_each cue restored over (not expanded again), its
	// items' names, which merges of their branches go by.
	itemIDs []string
}

// phase is where one target agent of a cue is.
type phase int

const (
	tIdle    phase = iota // no attempt running (not started, or waiting to retry)
	tWarning              // WARNING sent, waiting for its ack
	tWarned               // acked WARNING
	tStandby              // STANDBY sent
	tReady                // acked STANDBY: waits for GO
	tGoing                // GO sent
	tDone                 // completed
	tFailed               // failed for good: no retry, no fallback left
)

// target is one agent a cue addresses: the agent listed, or the fallback
// that replaced it.
type target struct {
	listed    string      // the agent id as listed in the cue
	agent     *spec.Agent // the one attempting now
	fallbacks int         // how many of listed's fallbacks were taken
	tries     int         // attempts on the current agent
	phase     phase
	attempt   int // the number of the attempt running; 0: none
	// parking: the attempt running stands by for a manual GO and is being
	// stopped because the run pauses (Park); parked: the number of such an
	// attempt, stopped, which the target's next launch takes again.
	parking bool
	parked  int
	retryAt time.Time
	outputs map[string]any
}

// New returns the core of a run whose cues are all pending; Restore takes
// back a recorded run's, then Begin starts scheduling.
func New(cfg Config) *Core {
	p := cfg.Plan
	n := len(p.Order)
	c := &Core{cfg: cfg, plan: p, byID: make(map[string]*cue, n),
		touched: newCueQueue(n), waitWarn: newCueQueue(n), waitGo: newCueQueue(n),
		live: map[*cue]bool{}, sleepers: map[*cue]bool{}, withOutputs: p.NewCueSet(), locks: newLocks(),
		cooldowns: map[string]time.Time{}}
	if c.cfg.Trivial == nil {
		c.cfg.Trivial = func(*spec.Agent) bool { return false }
	}
	if c.cfg.Jitter == nil {
		c.cfg.Jitter = randN
	}
	for i, pc := range p.Order {
		cr := &cue{pos: i, spec: pc, state: Pending}
		for _, id := range pc.Agents {
			cr.targets = append(cr.targets, target{listed: id, agent: p.Agents[id]})
		}
		c.cues = append(c.cues, cr)
		c.byID[pc.ID] = cr
	}
	return c
}

// Begin sets the counters from the cues' states and touches every cue,
// once, when the run starts (now: for max_duration).
func (c *Core) Begin(now time.Time) {
	c.began = now
	for _, cr := range c.cues {
		switch {
		case cr.state.Final():
			c.finals++
		case (cr.spec.Manual() || cr.state == Interrupted) && !cr.approved:
			c.unapproved++
		}
		c.touch(cr)
	}
}

// Decisions returns what the inputs since the last call decided, in order.
// The slice is reused: it is valid until the next input.
func (c *Core) Decisions() []Decision {
	d := c.out
	c.out = c.out[:0]
	return d
}

func (c *Core) decide(d Decision) { c.out = append(c.out, d) }

func randN(n time.Duration) time.Duration { return rand.N(n + 1) }

// Len is the number of cues.
func (c *Core) Len() int { return len(c.cues) }

// State returns where cue pos is, and why.
func (c *Core) State(pos int) (State, string) { return c.cues[pos].state, c.cues[pos].reason }

// Pos returns the plan position of cue id, or -1.
func (c *Core) Pos(id string) int {
	if cr := c.byID[id]; cr != nil {
		return cr.pos
	}
	return -1
}

// Outputs returns the outputs of completed cue pos.
func (c *Core) Outputs(pos int) map[string]any { return c.cues[pos].outputs }

// WithOutputs is the set of completed cues that produced outputs.
func (c *Core) WithOutputs() planner.CueSet { return c.withOutputs }

// Finished reports whether every cue has reached a final state.
// The run's result merge, once started, must end first.
func (c *Core) Finished() bool { return c.finals == len(c.cues) && c.merges.active == 0 }

// WakeAt is when the core wants Wake called (zero: never).
func (c *Core) WakeAt() time.Time { return c.wakeAt }

// Wake is the timer firing: the cues waiting for a time are looked at again.
func (c *Core) Wake() {
	c.wakeAt = time.Time{}
	for cr := range c.sleepers {
		c.touch(cr)
	}
	clear(c.sleepers)
}

// Stopping says that every attempt is being stopped: those ending now were
// stopped, not failed.
func (c *Core) Stopping() { c.stopping = true }

// Broken says the run cannot be recorded: nothing more is decided.
func (c *Core) Broken() { c.broken = true }

// Waiting lists the cues that wait for a person's GO, in plan order.
func (c *Core) Waiting() []string {
	var out []string
	for _, cr := range c.cues {
		if !cr.state.Final() && (cr.spec.Manual() || cr.state == Interrupted) && !cr.approved {
			out = append(out, cr.spec.ID)
		}
	}
	return out
}

// Stuck reports whether nothing can move without a person: every one of
// the running attempts (as the runner counts them) is a manual cue's agent
// standing by for GO.
func (c *Core) Stuck(running int) bool {
	if !c.wakeAt.IsZero() || c.asking > 0 || c.touched.Len() > 0 || c.merges.active > 0 {
		return false
	}
	standingBy := 0
	for cr := range c.live {
		for _, t := range cr.targets {
			if t.attempt != 0 && cr.state == Standby && cr.spec.Manual() && !cr.approved && t.phase == tReady {
				standingBy++
			}
		}
	}
	return standingBy == running // attempts of ended cues still stopping count as moving
}

// Park says the run pauses for a person's GO: the attempts standing by for
// a manual GO are about to be stopped with it, and are paused, not ended:
// the cue's next preparation starts each again under its number, so the
// attempt prepared before the pause is the one that gets the GO.
func (c *Core) Park() {
	for _, cr := range c.cues {
		if cr.state != Standby || !cr.spec.Manual() || cr.approved {
			continue
		}
		for i := range cr.targets {
			if t := &cr.targets[i]; t.attempt != 0 && t.phase == tReady {
				t.parking = true
			}
		}
	}
}

// StandDown takes every cue being prepared or in GO back to pending (the
// run pauses; its attempts were stopped).
func (c *Core) StandDown(reason string) {
	for _, cr := range c.cues {
		if !cr.state.Final() && cr.state != Pending && cr.state != Interrupted {
			c.stopMerge(cr, reason)
			c.setState(cr, Pending, reason)
		}
	}
}

// EndAll ends every cue not yet over in state s (the run stops).
func (c *Core) EndAll(s State, reason string) {
	for _, cr := range c.cues {
		if !cr.state.Final() {
			c.stopItems(cr, fmt.Sprintf("cue %s is %s", cr.spec.ID, s))
			c.endCue(cr, s, reason)
		}
	}
	c.stopResult(reason)
}

// StopCue ends one cue stopped while the rest of the run goes on (orch stop
// RUN CUE, docs/design.md#cascade-stop): its attempts are stopped (and with them the tasks
// they handed off or spawned), and its dependents are blocked as by any
// dependency that will not complete. It says why not when the cue is
// unknown or over.
func (c *Core) StopCue(id, reason string) (bool, string) {
	cr := c.byID[id]
	switch {
	case cr == nil:
		return false, fmt.Sprintf("the run has no cue %s", id)
	case cr.state.Final():
		return false, fmt.Sprintf("cue %s is already %s", id, cr.state)
	}
	if cr.asking { // a person's answer, if it comes, finds the cue over
		cr.asking = false
		c.asking--
	}
	why := fmt.Sprintf("cue %s was stopped: %s", id, reason) // who stopped it reaches its agents and their children
	c.stopItems(cr, why)
	c.endCueWhy(cr, Stopped, reason, why)
	return true, ""
}

// StoppedCues lists the cues stopped on their own (StopCue) while the run
// went on, in plan order.
func (c *Core) StoppedCues() []string {
	var out []string
	for _, cr := range c.cues {
		if cr.state == Stopped && !c.stopping && cr.parent == nil { // a stopped item fails its fan-out, which says so
			out = append(out, cr.spec.ID)
		}
	}
	return out
}

// Approve records GO for a cue waiting for a person's (orch go, or the
// terminal); false if the cue is unknown or already approved.
func (c *Core) Approve(id, reason string) bool {
	cr := c.byID[id]
	if cr == nil || cr.approved {
		return false
	}
	c.approve(cr, reason)
	return true
}

// ApprovalAnswered is a person's answer at the terminal (AskForGo).
func (c *Core) ApprovalAnswered(pos int, ok bool) {
	cr := c.cues[pos]
	if cr.asking {
		cr.asking = false
		c.asking--
	}
	if ok {
		c.Approve(cr.spec.ID, "approved at the terminal")
	} else {
		cr.declined = true
	}
}

func (c *Core) approve(cr *cue, reason string) {
	cr.approved = true
	if (cr.spec.Manual() || cr.state == Interrupted) && !cr.state.Final() {
		c.unapproved--
	}
	c.decide(Decision{Kind: ManualGo, Cue: cr.pos, Reason: reason})
	c.touch(cr)
}
