package protocols

// The blackboard's and memory's later messages (docs/design.md#context-layers, the
// guidelines' state versioning): watching keys, fenced writes, and deleting
// a memory item. Their rows are at the end of the table, in registry.go.

const (
	// TypeBlackboardWatch asks for a notice of every write to some keys
	// during the attempt; answer blackboard.watching.
	TypeBlackboardWatch    = "blackboard.watch"
	TypeBlackboardWatching = "blackboard.watching"
	// TypeBlackboardChanged is the notice of a write to a watched key.
	TypeBlackboardChanged = "blackboard.changed"
	// TypeBlackboardConflict answers a blackboard.write whose
	// expected_version is not the key's version: nothing was written.
	TypeBlackboardConflict = "blackboard.conflict"
	// TypeMemoryDelete forgets a memory item; answer memory.ack.
	TypeMemoryDelete = "memory.delete"
)

// BlackboardWatch asks orch to send a blackboard.changed notice for every
// write, by anyone else, to one of Keys or to a key starting with Prefix,
// until the attempt ends. Answer BlackboardWatching. One of Keys and Prefix
// is needed; a second watch adds to the first.
type BlackboardWatch struct {
	CueID  string   `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Keys   []string `json:"keys,omitempty"`
	Prefix string   `json:"prefix,omitempty"`
}

// BlackboardWatching answers BlackboardWatch with what is now watched.
type BlackboardWatching struct {
	Keys   []string `json:"keys,omitempty"`
	Prefix string   `json:"prefix,omitempty"`
}

// BlackboardChanged tells a watcher that a watched key has a new version.
type BlackboardChanged struct {
	CueID   string `json:"cue_id,omitempty"` // the watching task
	Key     string `json:"key" protocol:"required"`
	Version int64  `json:"version" protocol:"required"`
	Author  string `json:"author,omitempty"`
	Value   any    `json:"value"`
}

// BlackboardConflict answers a BlackboardWrite whose ExpectedVersion was
// not the key's current version (0: the key exists): nothing was written.
// CurrentVersion is 0 when the key does not exist.
type BlackboardConflict struct {
	Key            string `json:"key" protocol:"required"`
	CurrentVersion int64  `json:"current_version" protocol:"required"`
	Author         string `json:"author,omitempty"` // who wrote the current version
}

// MemoryDelete forgets the memory item Key and its history; answer
// MemoryAck (also when there was no such item: the key is gone either way).
type MemoryDelete struct {
	CueID string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Key   string `json:"key" protocol:"required,nonempty"`
}

// BoardEntry is one key of the GO task's blackboard snapshot with who wrote
// its latest version (Task.BlackboardEntries).
type BoardEntry struct {
	Value   any    `json:"value"`
	Version int64  `json:"version"`
	Author  string `json:"author"`
}

func (BlackboardWatch) MessageType() string    { return TypeBlackboardWatch }
func (BlackboardWatching) MessageType() string { return TypeBlackboardWatching }
func (BlackboardChanged) MessageType() string  { return TypeBlackboardChanged }
func (BlackboardConflict) MessageType() string { return TypeBlackboardConflict }
func (MemoryDelete) MessageType() string       { return TypeMemoryDelete }
