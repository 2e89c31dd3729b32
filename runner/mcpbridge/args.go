package mcpbridge

import "github.com/orch-cli/orch/protocols"

// The tools' arguments and results. A field without omitempty is required;
// the jsonschema tag is the description the agent's model reads.

type readArgs struct {
	Key string `json:"key" jsonschema:"the blackboard key to read"`
}

type readResult struct {
	Found   bool   `json:"found" jsonschema:"whether the key exists"`
	Value   any    `json:"value,omitempty" jsonschema:"the key's value (any JSON value)"`
	Version int64  `json:"version" jsonschema:"the key's version (0 when not found)"`
	Author  string `json:"author" jsonschema:"the agent that wrote this version"`
}

type writeArgs struct {
	Key             string `json:"key" jsonschema:"the blackboard key to write"`
	Value           any    `json:"value" jsonschema:"the value: any JSON value, at most 1 MiB"`
	ExpectedVersion *int64 `json:"expected_version,omitempty" jsonschema:"write only if the key is at this version (0: only if it does not exist yet)"`
}

type writeResult struct {
	Key     string `json:"key"`
	Version int64  `json:"version" jsonschema:"the key's new version"`
}

type listArgs struct {
	Prefix string `json:"prefix,omitempty" jsonschema:"list only the keys that start with this"`
}

type listResult struct {
	Keys []BoardKey `json:"keys" jsonschema:"the keys, sorted, without their values"`
}

type askArgs struct {
	Question   string   `json:"question" jsonschema:"the question for the person (or the agent that started yours)"`
	Complexity string   `json:"complexity,omitempty" jsonschema:"quick (a short answer) or deep (needs thought); quick when not given"`
	Options    []string `json:"options,omitempty" jsonschema:"the answers to choose from; none: any answer"`
}

type askResult struct {
	Answer string `json:"answer"`
}

type sendArgs struct {
	To      string `json:"to" jsonschema:"the agent id or task id of the recipient (see list_agents)"`
	Body    any    `json:"body" jsonschema:"the message: any JSON value, at most 1 MiB"`
	Private bool   `json:"private,omitempty" jsonschema:"only the recipient sees the body (the tasks it is routed through see that a message passed)"`
}

type sendResult struct {
	Sent bool `json:"sent"`
}

type broadcastArgs struct {
	Body any `json:"body" jsonschema:"the message for every other agent at work: any JSON value, at most 1 MiB"`
}

type broadcastResult struct {
	Recipients []string `json:"recipients" jsonschema:"the task ids it reached"`
}

type inboxArgs struct {
	WaitSeconds float64 `json:"wait_seconds,omitempty" jsonschema:"when nothing is waiting, wait up to this many seconds for a notice (at most 300); 0: return at once"`
}

type inboxResult struct {
	Notices []Notice `json:"notices" jsonschema:"messages, broadcasts, changes of watched blackboard keys and announcements of spawned tasks, oldest first"`
}

type handoffArgs struct {
	ToAgent string         `json:"to_agent" jsonschema:"the agent to hand the work to (see list_agents: accepts_handoff)"`
	TaskID  string         `json:"task_id,omitempty" jsonschema:"your name for this piece of work; orch names it when not given"`
	Context map[string]any `json:"context" jsonschema:"what the receiver needs to do the work (its inputs), at most 1 MiB"`
}

type handoffResult struct {
	Status  string         `json:"status" jsonschema:"completed, failed or refused"`
	Outputs map[string]any `json:"outputs" jsonschema:"the receiver's outputs"`
	Reason  string         `json:"reason,omitempty" jsonschema:"why it failed or was refused"`
}

type spawnArgs struct {
	Agent  string         `json:"agent" jsonschema:"the agent to start as a child task"`
	Inputs map[string]any `json:"inputs,omitempty" jsonschema:"the child's inputs, at most 1 MiB"`
}

type spawnResult struct {
	TaskID string `json:"task_id" jsonschema:"the child's task id; its end is announced through inbox"`
}

type noArgs struct{}

type agentsResult struct {
	Agents []protocols.ListedAgent `json:"agents" jsonschema:"every task of the run at work, yours included"`
}

type statusArgs struct {
	State    string  `json:"state" jsonschema:"what you are doing, in a word or a few (working, blocked, testing...)"`
	Progress float64 `json:"progress,omitempty" jsonschema:"how far along, 0 to 1"`
	Detail   string  `json:"detail,omitempty" jsonschema:"a line more"`
}

type empty struct{}

type searchArgs struct {
	Query string `json:"query" jsonschema:"words to search memory for (full text)"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many items"`
}

type searchResult struct {
	Items []map[string]any `json:"items"`
}

type memoryArgs struct {
	Key  string   `json:"key" jsonschema:"the memory key (a new version when it exists)"`
	Text string   `json:"text" jsonschema:"what to remember, across runs"`
	Tags []string `json:"tags,omitempty"`
}

type escalateArgs struct {
	Kind         string `json:"kind" jsonschema:"error or conflict"`
	Message      string `json:"message" jsonschema:"what went wrong, or what is in conflict"`
	Severity     string `json:"severity" jsonschema:"low, medium, high or critical (high and critical wait in the person's inbox)"`
	ConflictType string `json:"conflict_type,omitempty" jsonschema:"a conflict's kind: resource, timing or output (output when not given)"`
}
