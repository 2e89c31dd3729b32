// Package sched is the run's scheduler core: it decides, and does nothing
// else. It owns every cue's phase (pending, WARNING, STANDBY, GO and the
// final states), the budgets of prepared and going cues, early WARNING,
// conditions, blocking, the run-time locks and their arbitration, retries
// with backoff, fallbacks and cooldowns, manual GO, the run's limits
// (max_credits and max_cost_usd counted from the agents' usage, max_duration), and what a
// resumed run takes back from its record. Tasks, beside it, owns the task
// tree (parent and children, depth, siblings, who is at work) and the
// questions (who a question goes to, bubbling up to the nearest ancestor
// at work else the person; its deadline; answered, unanswered, withdrawn).
// A child task's attempts are decided here too (ChildEnded: retry at a time
// after its agent's backoff, or completed, failed or stopped); a child
// takes no GO slot and no lock and has no fallback, so that decision
// changes nothing else in the core.
//
// A Core and a Tasks belong to one goroutine (the runner's loop). It has no mutex, no
// goroutine, no channel, and never reads a clock: every input carries the
// time. It does no I/O: the two things it must read (the blackboard values
// of a cue's conditions, an agent's cooldown) come through Lookup, which the
// runner implements over its store and tests implement over a map.
//
// Inputs are method calls (Advance, Warned, Ready, Ended, Approve, Wake,
// ...); each appends typed Decisions (start an attempt, send STANDBY or GO,
// record a cue's state, stop an attempt, record a conflict, ask a person)
// that the caller takes with Decisions, records, and then carries out. The
// runner package is that caller: it owns processes, requests and the store.
package sched
