// Package proc starts and stops agent processes so that nothing they start
// outlives them: each process leads its own process group, with pipes for
// its streams that orch reads with deadlines; it is stopped with SIGTERM,
// then SIGKILL after a grace period (Process.Terminate); what it left in its
// group, or in its cgroup, is stopped when it ends (Process.Sweep); and a
// run's Sweeper finds and kills the descendants that escaped (setsid,
// orphans) and removes the run's cgroup at its end. KillLeftovers kills
// what a run left when its owner died.
//
// It knows runs only by their ID and attempt tokens (Spec.Token, RUN/...):
// it imports no other orch package, so any engine's worker can run agents
// with it.
//
// What each platform guarantees (the README's platform table has it in
// full):
//   - Linux: a cgroup v2 per run where orch's cgroup is writable (every
//     descendant killed with cgroup.kill); else orch is the subreaper and
//     every orphan, with or without an attempt token, is found and killed
//     with its tree.
//   - macOS: process groups and signals as on Linux; an escaped descendant
//     is reparented to launchd and found there by its attempt token, so one
//     that cleared its environment (env -i) is not found.
//   - Windows: Supported refuses runs; the rest only builds.
package proc
