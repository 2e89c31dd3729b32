// Package temporal runs a cuelist on Temporal (orch run --engine temporal):
// a workflow, orch.run, interprets the compiled plan with the runner's own
// scheduler core (runner/sched), driven by workflow time, and turns the
// core's decisions into activities: orch.warning (prepare), orch.standby
// (ready_check) and orch.go (the agent's command), run by orch-temporal
// worker processes, each on the task queue of its agent's placement, with
// the local runner's drivers (runner/driver: plain, jsonl, ACP, the coding
// CLIs). A worker keeps a run's jsonl and ACP agent processes between
// phases (agents.go); an agent's requests and orch's MCP tools (mcp.go) go
// to the workflow (hub.go), which answers them with updates, a query and a
// signal (collab.go).
//
// The workflow keeps orch's own event log (record.Event, seq-numbered); a
// follower (orch-temporal run) reads it with the orch.events query and
// mirrors it into the local store, so orch status, events, logs and serve
// work unchanged. People act on the run through signals: orch.go,
// orch.answer, orch.stop and orch.bb-set.
//
// The workflow builds its plan from the cuelist a worker returned
// (loadPlan); a worker keeps the last few plans built, so a replay of the
// workflow does not plan again (plancache.go).
//
// The package never imports runner/store: the store is the follower's.
//
// Determinism: the workflow's code is replayed from its history for the
// whole life of a run, which may outlive any release of orch. The rule:
// once a history is recorded under testdata/histories, any later change to
// the workflow (what it schedules, in what order, its timers, signals,
// side effects, and the scheduler core's decisions it acts on) goes behind
// workflow.GetVersion, with a change id naming it:
//
//	if workflow.GetVersion(ctx, "orch-standby-timeout", workflow.DefaultVersion, 1) == 1 {
//		// the new behaviour
//	} else {
//		// the old one, kept for runs that started before it
//	}
//
// The golden histories (exported from dev-server runs, see
// testdata/histories/README) must keep replaying in plain go test
// (TestReplayGoldenHistories): a change outside GetVersion fails there
// with a determinism error. Histories are never edited or deleted; after a
// change, record one more.
package temporal
