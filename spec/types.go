package spec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Duration is a Go duration written as a string in YAML ("5s", "10m", "2h").
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	_ = json.Unmarshal(b, &s)
	// A bad duration has already been reported by the schema's duration format;
	// failing here would stop encoding/json from decoding the fields after it.
	v, _ := time.ParseDuration(s)
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Origin ties a decoded value to the document it came from and its JSON pointer,
// so that any check can report at the exact line and column.
type Origin struct {
	Doc *Document `json:"-"`
	Ptr string    `json:"-"`
}

// At returns the position of the field at ptr below this value. For the value
// itself (ptr "") that is its key, as in "agent:", when it has one.
func (o Origin) At(ptr string) Pos {
	if o.Doc == nil {
		return Pos{}
	}
	if ptr == "" {
		return o.Doc.KeyPos(o.Ptr)
	}
	return o.Doc.Pos(o.Ptr + ptr)
}

// Agent is an agent contract (docs/design.md#agent-contracts).
type Agent struct {
	Origin      `json:"-"`
	ID          string         `json:"id"`
	Description string         `json:"description,omitempty"`
	Command     []string       `json:"command,omitempty"`
	Run         string         `json:"run,omitempty"`
	Protocol    string         `json:"protocol,omitempty"` // "none" (default), "jsonl", "acp", "claude-code" or "codex"
	Workdir     string         `json:"workdir,omitempty"`
	Workspace   string         `json:"workspace,omitempty"` // "worktree": a git worktree per attempt; "" or "workdir": workdir
	Env         map[string]any `json:"env,omitempty"`
	Secrets     []string       `json:"secrets,omitempty"`
	Requires    []string       `json:"requires,omitempty"`
	Provides    []string       `json:"provides,omitempty"`
	HandoffTo   []string       `json:"handoff_to,omitempty"`
	Priority    int            `json:"priority,omitempty"`
	Concurrency int            `json:"concurrency,omitempty"` // 0 means the default, 1
	Tools       *ToolPolicy    `json:"tools,omitempty"`
	Timeout     Duration       `json:"timeout,omitempty"`
	Retry       *Retry         `json:"retry,omitempty"`
	Fallback    []string       `json:"fallback,omitempty"`
	Cooldown    Duration       `json:"cooldown,omitempty"`
	Prepare     []string       `json:"prepare,omitempty"`
	ReadyCheck  []string       `json:"ready_check,omitempty"`
	// Prompt is a text/template over the GO task (coding agents: see
	// PromptProtocols); a cue's prompt wins.
	Prompt string `json:"prompt,omitempty"`
	// Permissions answers an ACP agent's permission requests by tool kind
	// (PermissionKinds): allow, deny or ask (the person).
	Permissions map[string]string `json:"permissions,omitempty"`
	// Placement says where the agent's processes run under a distributed
	// engine (orch run --engine temporal); the local engine ignores it.
	Placement *Placement `json:"placement,omitempty"`
	// MCPServers are MCP servers of the agent's own, passed to it beside
	// orch's (see MCPServer).
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
}

// Placement is where an agent runs under a distributed engine.
type Placement struct {
	// Queue is the task queue of the workers that run the agent (orch
	// worker --queue Q): the machines with its tools or GPUs.
	Queue string `json:"queue,omitempty"`
}

// Dir is the directory the agent's file is in: workdir and relative commands start there.
func (a *Agent) Dir() string { return dirOf(a.Doc) }

// MaxConcurrency is the number of cues the agent serves at once.
func (a *Agent) MaxConcurrency() int {
	if a.Concurrency < 1 {
		return 1
	}
	return a.Concurrency
}

// ToolPolicy narrows the tools an agent may use (names or group:NAME).
type ToolPolicy struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Retry says how often and on what an agent's attempt is retried.
type Retry struct {
	MaxAttempts int      `json:"max_attempts,omitempty"`
	Backoff     Duration `json:"backoff,omitempty"`
	MaxBackoff  Duration `json:"max_backoff,omitempty"`
	RetryOn     []string `json:"retry_on,omitempty"`
}

// Cuelist is a set of cues with their dependency graph and run settings (docs/design.md#cuelists).
type Cuelist struct {
	Origin      `json:"-"`
	ID          string              `json:"id"`
	Description string              `json:"description,omitempty"`
	Include     []string            `json:"include,omitempty"`
	Inputs      map[string]any      `json:"inputs,omitempty"`
	MaxParallel int                 `json:"max_parallel,omitempty"`
	Secrets     []string            `json:"secrets,omitempty"` // env names whose values are masked for the whole run
	Arbitration string              `json:"arbitration,omitempty"`
	Resources   map[string]int      `json:"resources,omitempty"`
	Limits      Limits              `json:"limits,omitempty"`
	Guardrails  Guardrails          `json:"guardrails,omitempty"`
	Defaults    Defaults            `json:"defaults,omitempty"`
	Notify      *Notify             `json:"notify,omitempty"`
	ToolGroups  map[string][]string `json:"tool_groups,omitempty"`
	Tools       *ToolPolicy         `json:"tools,omitempty"`
	Cues        []*Cue              `json:"cues"`
}

// Dir is the directory of the cuelist's file.
func (c *Cuelist) Dir() string { return dirOf(c.Doc) }

// Limits bound a whole run.
type Limits struct {
	MaxDuration Duration `json:"max_duration,omitempty"`
	MaxCredits  float64  `json:"max_credits,omitempty"`
	MaxCostUSD  float64  `json:"max_cost_usd,omitempty"` // the agents' reported cost, in US dollars
}

// DefaultLoopBlock is the repeat of one request from which the loop guard
// blocks it when the cuelist does not say (docs/design.md#loop-detection).
const DefaultLoopBlock = 20

// Guardrails bound what agents may do to each other during a run.
type Guardrails struct {
	MaxHandoffDepth *int                `json:"max_handoff_depth,omitempty"`
	LoopWarn        int                 `json:"loop_warn,omitempty"`
	LoopBlock       int                 `json:"loop_block,omitempty"`
	LoopFail        int                 `json:"loop_fail,omitempty"` // left out: twice loop_block
	MessageRate     int                 `json:"message_rate,omitempty"`
	QuestionTimeout Duration            `json:"question_timeout,omitempty"`
	DenyAtDepth     map[string][]string `json:"deny_at_depth,omitempty"`
}

// Defaults are per-phase timeouts for every cue of the cuelist, and the cap
// on what each attempt's output may cost the store.
type Defaults struct {
	AckTimeout     Duration `json:"ack_timeout,omitempty"`
	StandbyTimeout Duration `json:"standby_timeout,omitempty"`
	Timeout        Duration `json:"timeout,omitempty"`
	KillGrace      Duration `json:"kill_grace,omitempty"`
	MaxLog         Size     `json:"max_log,omitempty"`
	// WarningLead: for a cue with no dependencies, how long before its GO
	// its WARNING goes out (a cue's own warning_lead wins).
	WarningLead Duration `json:"warning_lead,omitempty"`
	// Merge is how worktree branches are merged where a cue has no merge:
	// of its own, and for the run's result (spec/merge.go).
	Merge *Merge `json:"merge,omitempty"`
}

// Cue is one coordinated action of a cuelist.
type Cue struct {
	Origin       `json:"-"`
	Index        int            `json:"-"` // position in the cuelist: file order breaks ties
	ID           string         `json:"id"`
	Description  string         `json:"description,omitempty"`
	Agents       []string       `json:"agents"`
	Dependencies []string       `json:"dependencies,omitempty"`
	AutoFollow   string         `json:"auto_follow,omitempty"`
	Go           string         `json:"go,omitempty"` // "auto" (default) or "manual"
	Conditions   []string       `json:"conditions,omitempty"`
	Inputs       map[string]any `json:"inputs,omitempty"`
	Claims       []string       `json:"claims,omitempty"`
	Outputs      []string       `json:"outputs,omitempty"`
	Exports      []string       `json:"exports,omitempty"`
	Priority     *int           `json:"priority,omitempty"`
	Timeout      Duration       `json:"timeout,omitempty"`
	Estimate     Duration       `json:"estimate,omitempty"`
	Idempotent   *bool          `json:"idempotent,omitempty"`
	Prompt       string         `json:"prompt,omitempty"` // wins over its agents' prompt
	// Group, PreparationRequired and ReadyCheck are sent to protocol
	// agents in coord.warning (cue_group, preparation_required) and
	// coord.standby (ready_check): text for the agents, not commands.
	Group               string   `json:"group,omitempty"`
	PreparationRequired []string `json:"preparation_required,omitempty"`
	ReadyCheck          []string `json:"ready_check,omitempty"`
	// WarningLead: for a cue with no dependencies, how long before its GO
	// its WARNING goes out (defaults.warning_lead when zero).
	WarningLead Duration `json:"warning_lead,omitempty"`
	// AcceptChildExports merges the outputs of the handoff and spawn
	// children that completed under the cue's attempt into the cue's
	// outputs (its agents' own outputs win a clash).
	AcceptChildExports bool `json:"accept_child_exports,omitempty"`
	// ForEach fans the cue out over a list: one task per item.
	ForEach *ForEach `json:"for_each,omitempty"`
	// Merge says how the worktree branches of the cue's dependencies are
	// merged before it starts from them (spec/merge.go).
	Merge *Merge `json:"merge,omitempty"`
}

// Manual reports whether a person must say GO.
func (c *Cue) Manual() bool {
	if c.Go == "manual" {
		return true
	}
	for _, cond := range c.Conditions {
		if cond == "approval_received" {
			return true
		}
	}
	return false
}

// IsIdempotent reports whether the cue may run again after a crash (default true).
func (c *Cue) IsIdempotent() bool { return c.Idempotent == nil || *c.Idempotent }

// Handoff is a handoff spec: a task.handoff message written as a file (docs/design.md#handoff-specs).
type Handoff struct {
	Origin  `json:"-"`
	From    string         `json:"from_agent"`
	To      string         `json:"to_agent"`
	TaskID  string         `json:"task_id"`
	Context map[string]any `json:"handoff_context"`
}

// Artifact is a file a handoff says it produced.
type Artifact struct {
	Path string `json:"path"`
	Hash string `json:"hash,omitempty"`
}

// Artifacts returns handoff_context.artifacts_produced, with the index of each.
func (h *Handoff) Artifacts() []Artifact {
	list, _ := h.Context["artifacts_produced"].([]any)
	out := make([]Artifact, 0, len(list))
	for _, e := range list {
		m, _ := e.(map[string]any)
		p, _ := m["path"].(string)
		hash, _ := m["hash"].(string)
		out = append(out, Artifact{Path: p, Hash: hash})
	}
	return out
}

// decodeCue reads a cue from its JSON value. Values of the wrong type (already
// reported by the schema) are left at their zero value.
func decodeCue(m map[string]any) *Cue {
	c := &Cue{}
	c.ID, _ = m["id"].(string)
	c.Description, _ = m["description"].(string)
	c.Agents = stringList(m["agents"])
	c.Dependencies = stringList(m["dependencies"])
	c.AutoFollow, _ = m["auto_follow"].(string)
	c.Go, _ = m["go"].(string)
	c.Prompt, _ = m["prompt"].(string)
	c.Conditions = stringList(m["conditions"])
	c.Inputs, _ = m["inputs"].(map[string]any)
	c.Claims = stringList(m["claims"])
	c.Outputs = stringList(m["outputs"])
	c.Exports = stringList(m["exports"])
	switch p := m["priority"].(type) {
	case int64:
		v := int(p)
		c.Priority = &v
	case float64: // 5.0 is an integer to the schema too
		if p == float64(int(p)) {
			v := int(p)
			c.Priority = &v
		}
	}
	c.Timeout = durationOf(m["timeout"])
	c.Estimate = durationOf(m["estimate"])
	if b, ok := m["idempotent"].(bool); ok {
		c.Idempotent = &b
	}
	c.Group, _ = m["group"].(string)
	c.PreparationRequired = stringList(m["preparation_required"])
	c.ReadyCheck = stringList(m["ready_check"])
	c.WarningLead = durationOf(m["warning_lead"])
	c.AcceptChildExports, _ = m["accept_child_exports"].(bool)
	c.ForEach = decodeForEach(m["for_each"])
	c.Merge = decodeMerge(m["merge"])
	return c
}

func stringList(v any) []string {
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func durationOf(v any) Duration {
	s, _ := v.(string)
	d, _ := time.ParseDuration(s)
	return Duration(d)
}

// decodeInto fills v from a JSON value. Type mismatches have already been
// reported by the schema; encoding/json skips such fields and goes on.
func decodeInto(value any, v any) error {
	b, err := json.Marshal(exactKeys(value, reflect.TypeOf(v)))
	if err != nil {
		return fmt.Errorf("re-encoding document: %w", err)
	}
	return json.Unmarshal(b, v)
}

// exactKeys drops the object keys that do not name a field of t exactly:
// encoding/json matches field names without regard to case, so `Cues:`
// would fill a cuelist's cues (without positions) although the schema
// reports it as an unknown field.
func exactKeys(value any, t reflect.Type) any {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return value
	}
	switch v := value.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			fields := map[string]reflect.Type{}
			jsonFields(t, fields)
			if len(fields) == 0 {
				return value // a type that decodes itself
			}
			out := make(map[string]any, len(v))
			for k, x := range v {
				if ft, ok := fields[k]; ok {
					out[k] = exactKeys(x, ft)
				}
			}
			return out
		case reflect.Map:
			out := make(map[string]any, len(v))
			for k, x := range v {
				out[k] = exactKeys(x, t.Elem())
			}
			return out
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = exactKeys(x, t.Elem())
			}
			return out
		}
	}
	return value
}

// jsonFields collects the JSON names of t's fields (embedded structs' too).
func jsonFields(t reflect.Type, into map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			jsonFields(f.Type, into)
		case f.IsExported():
			if name == "" {
				name = f.Name
			}
			into[name] = f.Type
		}
	}
}
