// Package control is what a person, or an agent on their behalf, can do to
// orch's runs: read them (runs, status, events, logs, the blackboard, the
// inbox, memory) and act on them (GO, stop, answer, acknowledge, retry,
// resume, the notification mode), whichever engine runs them. The command
// line, orch serve's HTTP API and the MCP tools are its callers; none of
// them decides or checks anything control does.
//
// Requests and results are plain structs. A read's result marshals to the
// JSON the command prints with --output json; an action's result says, in
// Message, what the command prints. Errors carry a Kind (see Error), which
// the command line maps to its exit status and the HTTP API to its status
// code, each in one place.
//
// A Controller serves one run database. A run in this process's hands is an
// Execution (a new run, or one continued by a GO, resume or retry): the
// caller runs it with its own display. A run on Temporal is handed over to
// orch-temporal, which holds the Temporal client; a run started or
// continued for a caller that must not run it itself (a GO or a retry asked
// of orch serve, a run an MCP tool starts) goes on in a detached orch
// process (Detach, StartDetached). Those are the only processes control
// starts, and never to make a decision. Wait waits until a run needs a
// person or stops moving.
package control
