// Package runner executes a plan. It is the I/O shell around the scheduler
// core (runner/sched, which decides every cue's phase, the budgets, the
// locks, retries, fallbacks, cooldowns, manual GO, the limits and credits,
// the task tree and the questions, and does no I/O): the loop (run) feeds
// the core what happened (an attempt's report, an agent's request, orch go
// and orch stop, a timer, a person's answer), records what it decided in
// one commit, then carries it out (commit-before-act).
//
// Who owns what:
//   - run (run.go, schedule.go, handle.go): the loop goroutine; its fields
//     are grouped by concern (scheduling, recording, agents, requests),
//     each group saying which goroutines touch it.
//   - attemptRun (attempt.go) and its driver: one agent's attempt at one
//     cue, on its own goroutine. It sees its run only through host
//     (host.go). Its driver (runner/driver: one file per protocol, which
//     registers it; adding one touches neither the core nor the loop) sees
//     the attempt as a driver.Attempt and the run's services through
//     driver.Host, which the attempt implements (attempt_host.go).
//     Processes are started and swept through runner/proc.
//   - the hub (hub.go, messages.go, tree.go, child.go, questions.go,
//     requests.go): agents' requests during GO (blackboard, memory,
//     messages, handoffs, questions), served on the attempts' goroutines,
//     or typed, without a wire message (call.go: attemptRun.Call, on the
//     caller's), one request of an attempt at a time.
//     What the core decides (a child task, who a question goes to, a
//     sibling, credits) the hub asks the loop with a typed request
//     (requests.go); the loop decides, records, and replies, and the hub
//     acts on the reply. A child task runs its attempts one after another
//     on a goroutine of its parent (child.go), taking no GO slot and no
//     lock; after each, the loop says whether it retries and when, or how
//     it ended (sched.Core.ChildEnded), and the child records that, then
//     waits or ends.
//   - the record (runner/record): the events, the states, EventFor (how
//     each decision of the core is recorded, in every engine) and the
//     Recorder's roles; runner/store is the SQLite Recorder. runner never
//     imports the store: its tests use an in-memory fake. Everything
//     recorded passes through redactingRecorder (runner/redact's masks).
package runner
