package record

import (
	"encoding/json"
	"time"

	"github.com/orch-cli/orch/runner/redact"
)

// The payloads of the event types (see payloads in events.go). Each has a
// redacted method listing every string it holds, so that nothing secret
// reaches the log.

// TaskStartedData is the data of EvTaskStarted.
type TaskStartedData struct {
	Parent  string         `json:"parent"`             // the parent's task id: a cue id, or a child's id
	Kind    string         `json:"kind"`               // "handoff" or "spawn"
	TaskRef string         `json:"task_ref,omitempty"` // the task_id the sender gave a handoff
	Depth   int            `json:"depth"`              // 1 for a child of a cue's agent
	Chain   []string       `json:"chain"`              // agents from the root to this child, this one last
	Context map[string]any `json:"context,omitempty"`  // the handoff_context, or the spawn's inputs
}

// QuestionData is the data of EvQuestion.
type QuestionData struct {
	ID         string    `json:"id"` // q1, q2, ... in the order asked in the run
	Question   string    `json:"question"`
	Complexity string    `json:"complexity"` // quick or deep
	To         string    `json:"to"`         // "person", or the id of the parent agent it went to
	Deadline   time.Time `json:"deadline"`   // when it becomes unanswered
	// Options are the answers it takes (an ACP permission request's):
	// orch answer checks an answer against them (PickOption).
	Options []QuestionOption `json:"options,omitempty"`
}

// AnswerData is the data of EvQuestionClosed.
type AnswerData struct {
	ID     string `json:"id"`
	Answer string `json:"answer,omitempty"`
	By     string `json:"by,omitempty"` // "person", or the agent that answered
}

// UsageData is the data of EvUsage: the attempt's totals so far, as
// reported, and the run's.
type UsageData struct {
	Credits         float64 `json:"credits"`   // the attempt's credits so far, as reported
	RunTotal        float64 `json:"run_total"` // the run's credits so far
	CostUSD         float64 `json:"cost_usd,omitempty"`
	InputTokens     int64   `json:"input_tokens,omitempty"`
	OutputTokens    int64   `json:"output_tokens,omitempty"`
	RunCostUSD      float64 `json:"run_cost_usd,omitempty"`
	RunInputTokens  int64   `json:"run_input_tokens,omitempty"`
	RunOutputTokens int64   `json:"run_output_tokens,omitempty"`
}

// WorktreeData is the data of EvWorktree.
type WorktreeData struct {
	Branch string `json:"branch"`           // orch/<run>/<cue>/<attempt>
	Base   string `json:"base"`             // the commit it started from
	From   string `json:"from,omitempty"`   // the dependency cue whose branch that is; "" for HEAD
	Path   string `json:"path"`             // the worktree (removed when the run ends)
	Commit string `json:"commit,omitempty"` // the branch's commit at the end of a successful attempt
}

// ExhaustedData is the data of EvExhausted.
type ExhaustedData struct {
	Limit string `json:"limit"` // max_credits, max_cost_usd or max_duration
	Used  string `json:"used"`  // e.g. "1003.5" or "2m0.1s"
	Max   string `json:"max"`
}

// UserMessageData is the data of EvUserMessage.
type UserMessageData struct {
	Kind string          `json:"kind"` // "message" (message.user), "discovery" (discovery.report) or "notice" (a message between root tasks, or routed through the person)
	From string          `json:"from"` // the sending agent
	To   string          `json:"to,omitempty"`
	Body json.RawMessage `json:"body,omitempty"` // never a private message's
	// A notice's tasks; Routed: a message between tasks of different cues,
	// whose nearest common ancestor is the person; Private: sent as private,
	// so without its body.
	FromTask string `json:"from_task,omitempty"`
	ToTask   string `json:"to_task,omitempty"`
	Routed   bool   `json:"routed,omitempty"`
	Private  bool   `json:"private,omitempty"`
}

// CueSpecsData is the data of EvCueSpecs.
type CueSpecsData struct {
	Hashes map[string]string `json:"hashes"` // cue id -> fingerprint of its definition
}

// RetriedData is the data of EvRunRetried.
type RetriedData struct {
	By    string   `json:"by"` // user@host (pid N)
	Rerun []string `json:"rerun"`
	Kept  int      `json:"kept"`              // completed cues kept
	Asked []string `json:"asked,omitempty"`   // --rerun
	From  string   `json:"from,omitempty"`    // --from
	Stale []string `json:"changed,omitempty"` // kept, though their definition changed
}

// RunStartedData is the data of EvRunStarted.
type RunStartedData struct {
	Cuelist    string         `json:"cuelist"`
	SpecPath   string         `json:"spec_path"`      // absolute path of the cuelist file
	SpecHash   string         `json:"spec_hash"`      // sha256 of every loaded spec file, for resume
	Inputs     map[string]any `json:"inputs"`         // the run parameters after --set
	Root       string         `json:"root,omitempty"` // the project root of handoff artifacts (absolute)
	Cues       []CueInfo      `json:"cues"`           // every cue, in plan order: the recorder creates their rows (pending)
	OwnerPID   int            `json:"owner_pid"`      // the orch process running it
	OwnerHost  string         `json:"owner_host"`     // and its host
	OwnerToken string         `json:"owner_token"`    // the owner's lease (see Recorder.Heartbeat)
	// Temporal is set for a run on the temporal engine (orch run --engine
	// temporal): where its workflow is, so that orch go, answer, stop, bb
	// set and resume hand over to orch-temporal. Nil: the local engine.
	Temporal *TemporalRun `json:"temporal,omitempty"`
}

// TemporalRun says where a run's workflow lives on Temporal.
type TemporalRun struct {
	Address    string `json:"address"`
	Namespace  string `json:"namespace"`
	TaskQueue  string `json:"task_queue"`
	WorkflowID string `json:"workflow_id"`
	Path       string `json:"path"` // the cuelist, relative to the workers' --root
	// GitRemote is where the workers push the branches of worktree agents,
	// GitRepo the repository of the checkout the run was started from: its
	// follower fetches them there when the run completes (orch land).
	GitRemote string `json:"git_remote,omitempty"`
	GitRepo   string `json:"git_repo,omitempty"`
	// How to reach a secured cluster (orch-temporal's --tls flags), for
	// orch go, stop and status later: the files' absolute paths, never
	// their contents, and never the API key (it stays in the environment).
	TLS           string `json:"tls,omitempty"` // "", true or false
	TLSCert       string `json:"tls_cert,omitempty"`
	TLSKey        string `json:"tls_key,omitempty"`
	TLSCA         string `json:"tls_ca,omitempty"`
	TLSServerName string `json:"tls_server_name,omitempty"`
	// Secrets are the names of the secrets the run's plan declares (names
	// only): its follower masks what it mirrors with them and its own
	// environment, whichever process follows.
	Secrets []string `json:"secrets,omitempty"`
}

// CueInfo describes a cue when the run starts.
type CueInfo struct {
	ID     string   `json:"id"`
	Agents []string `json:"agents"`
	// After is every cue it waits for: its dependencies, the cues whose
	// auto_follow it is, and those the arbitration put before it (the
	// edges of the run's DAG). Runs recorded before it have none.
	After  []string `json:"after,omitempty"`
	Manual bool     `json:"manual,omitempty"` // a person says GO (go: manual, approval_received)
}

// CueStateData is the optional data of EvCueState.
type CueStateData struct {
	Outputs map[string]any `json:"outputs,omitempty"` // with completed: the cue's merged outputs
	// Class is the class of a failure no attempt had: contract, for a
	// fan-out whose list is not one.
	Class string `json:"class,omitempty"`
}

// AttemptStartedData is the data of EvAttemptStarted.
type AttemptStartedData struct {
	Fallback bool `json:"fallback,omitempty"` // the agent replaces one that failed
}

// AttemptEndedData is the data of EvAttemptEnded.
type AttemptEndedData struct {
	Class    string         `json:"class,omitempty"`     // failure class: exit:N, timeout, malfunction, signal, contract, stopped
	ExitCode *int           `json:"exit_code,omitempty"` // when the process exited
	PID      int            `json:"pid,omitempty"`
	Outputs  map[string]any `json:"outputs,omitempty"`
}

// MessageData is the data of EvMessage.
type MessageData struct {
	Direction string          `json:"direction"` // "out" (orch to agent) or "in"
	Type      string          `json:"message_type"`
	ID        string          `json:"id,omitempty"`
	InReplyTo string          `json:"in_reply_to,omitempty"`
	Body      json.RawMessage `json:"body"` // the whole message as sent or received
}

// ConflictData is the data of EvConflict, in the seeds' escalation.conflict form.
type ConflictData struct {
	ConflictType       string   `json:"conflict_type"` // resource, timing or output
	CuesInvolved       []string `json:"cues_involved"`
	AgentsInvolved     []string `json:"agents_involved"`
	ResourceInQuestion string   `json:"resource_in_question"`
	Capacity           int      `json:"capacity"`
	ProposedResolution string   `json:"proposed_resolution"` // the arbitration strategy
	Winner             string   `json:"winner"`              // the cue holding it
	SuggestedWinner    string   `json:"suggested_winner"`    // the winner's agent
	Reason             string   `json:"reason"`
}

// CooldownData is the data of EvCooldown.
type CooldownData struct {
	Until time.Time `json:"until"`
	// Cleared: the agent succeeded, so its cooldown ended at Until.
	Cleared bool `json:"cleared,omitempty"`
}

// BlackboardData is the data of EvBlackboard.
type BlackboardData struct {
	Key     string `json:"key"`
	Version int64  `json:"version"`
	// MessageID is the blackboard.write the write carries out, if an agent
	// sent one: the event is that message's record (and, with Version, its
	// blackboard.ack's), so that a flood of writes costs one event each.
	MessageID string `json:"message_id,omitempty"`
}

func (p TaskStartedData) redacted(d *redact.Redactor) EventData {
	p.Parent, p.Kind, p.TaskRef = d.Text(p.Parent), d.Text(p.Kind), d.Text(p.TaskRef)
	p.Chain, p.Context = d.Texts(p.Chain), d.Object(p.Context)
	return p
}

func (p QuestionData) redacted(d *redact.Redactor) EventData {
	p.ID, p.Question, p.Complexity, p.To = d.Text(p.ID), d.Text(p.Question), d.Text(p.Complexity), d.Text(p.To)
	if !d.None() && p.Options != nil {
		options := make([]QuestionOption, len(p.Options))
		for i, o := range p.Options {
			options[i] = QuestionOption{ID: d.Text(o.ID), Name: d.Text(o.Name), Kind: d.Text(o.Kind)}
		}
		p.Options = options
	}
	return p
}

func (p AnswerData) redacted(d *redact.Redactor) EventData {
	p.ID, p.Answer, p.By = d.Text(p.ID), d.Text(p.Answer), d.Text(p.By)
	return p
}

func (p UsageData) redacted(*redact.Redactor) EventData { return p }

func (p ExhaustedData) redacted(d *redact.Redactor) EventData {
	p.Limit, p.Used, p.Max = d.Text(p.Limit), d.Text(p.Used), d.Text(p.Max)
	return p
}

func (p UserMessageData) redacted(d *redact.Redactor) EventData {
	p.Kind, p.From, p.To, p.Body = d.Text(p.Kind), d.Text(p.From), d.Text(p.To), d.JSON(p.Body)
	p.FromTask, p.ToTask = d.Text(p.FromTask), d.Text(p.ToTask)
	return p
}

func (p CueSpecsData) redacted(d *redact.Redactor) EventData {
	if d.None() || p.Hashes == nil {
		return p
	}
	// A fingerprint is a hex digest orch computed: it cannot carry a secret,
	// and masking a short declared secret that it happens to contain would
	// make orch retry take an unchanged cue for a changed one.
	hashes := make(map[string]string, len(p.Hashes))
	for id, h := range p.Hashes {
		hashes[d.Text(id)] = h
	}
	p.Hashes = hashes
	return p
}

// NoticeData is the data of EvNotice.
type NoticeData struct {
	Kind    string `json:"kind"`    // needed, failed or completed
	Subject string `json:"subject"` // what the notice said, in one line
	To      string `json:"to"`      // "command NAME" or "webhook SCHEME://HOST" (never a URL's path: it may hold a token)
	Tries   int    `json:"tries"`   // deliveries tried
}

func (p NoticeData) redacted(d *redact.Redactor) EventData {
	p.Kind, p.Subject, p.To = d.Text(p.Kind), d.Text(p.Subject), d.Text(p.To)
	return p
}

func (p RetriedData) redacted(d *redact.Redactor) EventData {
	p.By, p.From = d.Text(p.By), d.Text(p.From)
	p.Rerun, p.Asked, p.Stale = d.Texts(p.Rerun), d.Texts(p.Asked), d.Texts(p.Stale)
	return p
}

func (p RunStartedData) redacted(d *redact.Redactor) EventData {
	p.Cuelist, p.SpecPath, p.SpecHash, p.Root = d.Text(p.Cuelist), d.Text(p.SpecPath), d.Text(p.SpecHash), d.Text(p.Root)
	p.OwnerHost, p.OwnerToken = d.Text(p.OwnerHost), d.Text(p.OwnerToken)
	p.Inputs = d.Object(p.Inputs)
	if !d.None() && p.Cues != nil {
		cues := make([]CueInfo, len(p.Cues))
		for i, c := range p.Cues {
			cues[i] = CueInfo{ID: d.Text(c.ID), Agents: d.Texts(c.Agents), After: d.Texts(c.After), Manual: c.Manual}
		}
		p.Cues = cues
	}
	if t := p.Temporal; t != nil && !d.None() {
		c := *t // every field, masked
		c.Address, c.Namespace, c.TaskQueue, c.WorkflowID, c.Path = d.Text(t.Address), d.Text(t.Namespace), d.Text(t.TaskQueue), d.Text(t.WorkflowID), d.Text(t.Path)
		c.GitRemote, c.GitRepo, c.Secrets = d.Text(t.GitRemote), d.Text(t.GitRepo), d.Texts(t.Secrets)
		c.TLS, c.TLSCert, c.TLSKey, c.TLSCA, c.TLSServerName = d.Text(t.TLS), d.Text(t.TLSCert), d.Text(t.TLSKey), d.Text(t.TLSCA), d.Text(t.TLSServerName)
		p.Temporal = &c
	}
	return p
}

func (p CueStateData) redacted(d *redact.Redactor) EventData {
	p.Outputs, p.Class = d.Object(p.Outputs), d.Text(p.Class)
	return p
}

func (p AttemptStartedData) redacted(*redact.Redactor) EventData { return p }

func (p AttemptEndedData) redacted(d *redact.Redactor) EventData {
	p.Class, p.Outputs = d.Text(p.Class), d.Object(p.Outputs)
	return p
}

func (p MessageData) redacted(d *redact.Redactor) EventData {
	p.Direction, p.Type, p.ID, p.InReplyTo = d.Text(p.Direction), d.Text(p.Type), d.Text(p.ID), d.Text(p.InReplyTo)
	p.Body = d.JSON(p.Body)
	return p
}

func (p ConflictData) redacted(d *redact.Redactor) EventData {
	p.ConflictType, p.ResourceInQuestion, p.ProposedResolution = d.Text(p.ConflictType), d.Text(p.ResourceInQuestion), d.Text(p.ProposedResolution)
	p.Winner, p.SuggestedWinner, p.Reason = d.Text(p.Winner), d.Text(p.SuggestedWinner), d.Text(p.Reason)
	p.CuesInvolved, p.AgentsInvolved = d.Texts(p.CuesInvolved), d.Texts(p.AgentsInvolved)
	return p
}

func (p CooldownData) redacted(*redact.Redactor) EventData { return p }

func (p WorktreeData) redacted(d *redact.Redactor) EventData {
	p.Branch, p.Base, p.From, p.Path, p.Commit = d.Text(p.Branch), d.Text(p.Base), d.Text(p.From), d.Text(p.Path), d.Text(p.Commit)
	return p
}

// BlackboardConflictData is the data of EvBlackboardConflict: a
// conditional write of Key expected ExpectedVersion, the key was at
// CurrentVersion by Author.
type BlackboardConflictData struct {
	Key             string `json:"key"`
	ExpectedVersion int64  `json:"expected_version"`
	CurrentVersion  int64  `json:"current_version"`
	Author          string `json:"author,omitempty"`
	MessageID       string `json:"message_id,omitempty"` // the blackboard.write refused, if an agent sent one
}

func (p BlackboardConflictData) redacted(d *redact.Redactor) EventData {
	p.Key, p.Author, p.MessageID = d.Text(p.Key), d.Text(p.Author), d.Text(p.MessageID)
	return p
}

func (p BlackboardData) redacted(d *redact.Redactor) EventData {
	p.Key, p.MessageID = d.Text(p.Key), d.Text(p.MessageID)
	return p
}

func (p RawData) redacted(d *redact.Redactor) EventData {
	return RawData{JSON: d.JSON(p.JSON), Err: p.Err}
}

// StatusData is the data of EvAgentStatus.
type StatusData struct {
	Progress float64 `json:"progress,omitempty"` // 0..1, when reported
	Detail   string  `json:"detail,omitempty"`
	Asked    bool    `json:"asked,omitempty"` // it answered a status.request
}

func (p StatusData) redacted(d *redact.Redactor) EventData {
	p.Detail = d.Text(p.Detail)
	return p
}

// EscalationAckedData is the data of EvEscalationAcked: ID is the
// escalation's ("e" and the seq of the event that recorded it), By who
// acknowledged it (user@host, or "person" from orch serve's page).
type EscalationAckedData struct {
	ID string `json:"id"`
	By string `json:"by,omitempty"`
}

func (p EscalationAckedData) redacted(d *redact.Redactor) EventData {
	p.ID, p.By = d.Text(p.ID), d.Text(p.By)
	return p
}

// FanOutData is the data of EvFanOut: a for_each cue's items, in order.
type FanOutData struct {
	As    string       `json:"as"` // the item's name in prompts
	Items []FanOutItem `json:"items"`
}

// FanOutItem is one item of a fan-out.
type FanOutItem struct {
	ID   string `json:"id"`   // its task id: CUE[0], or CUE[<id>]
	Item any    `json:"item"` // the item
}

func (p FanOutData) redacted(d *redact.Redactor) EventData {
	if d.None() {
		return p
	}
	items := make([]FanOutItem, len(p.Items))
	for i, it := range p.Items {
		items[i] = FanOutItem{ID: d.Text(it.ID), Item: d.Value(it.Item)}
	}
	p.As, p.Items = d.Text(p.As), items
	return p
}

// EventType implements EventData: each payload names the type of its events.
func (RunStartedData) EventType() string         { return EvRunStarted }
func (CueStateData) EventType() string           { return EvCueState }
func (AttemptStartedData) EventType() string     { return EvAttemptStarted }
func (AttemptEndedData) EventType() string       { return EvAttemptEnded }
func (MessageData) EventType() string            { return EvMessage }
func (CooldownData) EventType() string           { return EvCooldown }
func (BlackboardData) EventType() string         { return EvBlackboard }
func (BlackboardConflictData) EventType() string { return EvBlackboardConflict }
func (ConflictData) EventType() string           { return EvConflict }
func (TaskStartedData) EventType() string        { return EvTaskStarted }
func (QuestionData) EventType() string           { return EvQuestion }
func (AnswerData) EventType() string             { return EvQuestionClosed }
func (UsageData) EventType() string              { return EvUsage }
func (ExhaustedData) EventType() string          { return EvExhausted }
func (UserMessageData) EventType() string        { return EvUserMessage }
func (CueSpecsData) EventType() string           { return EvCueSpecs }
func (RetriedData) EventType() string            { return EvRunRetried }
func (WorktreeData) EventType() string           { return EvWorktree }
func (NoticeData) EventType() string             { return EvNotice }
func (StatusData) EventType() string             { return EvAgentStatus }
func (EscalationAckedData) EventType() string    { return EvEscalationAcked }
func (FanOutData) EventType() string             { return EvFanOut }

// EventType is "": the payload's type is not known.
func (RawData) EventType() string { return "" }
