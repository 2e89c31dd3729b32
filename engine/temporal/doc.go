// Package temporal runs a cuelist on Temporal (orch run --engine temporal):
// a workflow, orch.run, interprets the compiled plan with the runner's own
// scheduler core (runner/sched), driven by workflow time, and turns the
// core's decisions into activities: orch.warning (prepare), orch.standby
// (ready_check) and orch.go (the agent's command), run by orch-temporal
// worker processes, each on the task queue of its agent's placement.
//
// The workflow keeps orch's own event log (runner.Event, seq-numbered); a
// follower (orch-temporal run) reads it with the orch.events query and
// mirrors it into the local store, so orch status, events, logs and serve
// work unchanged. People act on the run through signals: orch.go,
// orch.answer, orch.stop and orch.bb-set.
//
// The package never imports runner/store: the store is the follower's.
//
// Determinism: the workflow's code is replayed from its history for the
// whole life of a run. Every change to what it decides must go behind
// workflow.GetVersion, and the golden histories under testdata must keep
// replaying (TestReplayGoldenHistories).
package temporal
