package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/record"
)

// serve answers one of the agent's requests for this session (on its own
// goroutine: a permission may wait for a person).
func (s *acpSession) serve(m *rpcMessage) {
	var result any
	var rerr *rpcError
	switch m.Method {
	case "fs/read_text_file":
		result, rerr = s.readFile(m.Params)
	case "fs/write_text_file":
		result, rerr = s.writeFile(m.Params)
	case "session/request_permission":
		result = s.permission(m.Params)
	}
	_ = s.c.reply(m.ID, result, rerr)
}

// inside names path relative to the workspace; a path outside it is an error.
func (s *acpSession) inside(path string) (string, *rpcError) {
	if !filepath.IsAbs(path) {
		return "", &rpcError{Code: -32602, Message: "path must be absolute: " + path}
	}
	rel, err := filepath.Rel(s.cwd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", &rpcError{Code: -32602, Message: "path is outside the workspace " + s.cwd + ": " + path}
	}
	return rel, nil
}

// acpResourceNotFound is ACP's error code for a missing session or file.
const acpResourceNotFound = -32002

func (s *acpSession) readFile(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Path  string `json:"path"`
		Line  int    `json:"line"`
		Limit int    `json:"limit"`
	}
	_ = json.Unmarshal(params, &p)
	rel, rerr := s.inside(p.Path)
	if rerr != nil {
		return nil, rerr
	}
	f, err := s.root.Open(rel) // os.Root: no symlink leads out either
	if errors.Is(err, fs.ErrNotExist) {
		// ACP's "Resource not found", as the schema says: what an agent
		// that reads a file before writing it (gemini --acp) means to take
		// for "a new file".
		return nil, &rpcError{Code: acpResourceNotFound, Message: "Resource not found: " + p.Path}
	}
	if err != nil {
		return nil, &rpcError{Code: -32603, Message: err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, acpMaxLine/2))
	if err != nil {
		return nil, &rpcError{Code: -32603, Message: err.Error()}
	}
	content := string(data)
	if p.Line > 1 || p.Limit > 0 {
		lines := strings.SplitAfter(content, "\n")
		from := min(max(p.Line-1, 0), len(lines))
		to := len(lines)
		if p.Limit > 0 {
			to = min(from+p.Limit, to)
		}
		content = strings.Join(lines[from:to], "")
	}
	return map[string]string{"content": content}, nil
}

func (s *acpSession) writeFile(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	_ = json.Unmarshal(params, &p)
	rel, rerr := s.inside(p.Path)
	if rerr != nil {
		return nil, rerr
	}
	if err := s.root.WriteFile(rel, []byte(p.Content), 0o644); err != nil {
		return nil, &rpcError{Code: -32603, Message: err.Error()}
	}
	s.a.Host.Log("stdout", fmt.Sprintf("wrote %s (%d bytes)", rel, len(p.Content)))
	return nil, nil
}

type permOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once, allow_always, reject_once, reject_always
}

// permission answers session/request_permission by the agent's policy for
// the tool's kind (default: ask). orch itself only ever picks a _once
// option; ask puts the options, as the agent gave them, to the person.
// Every decision is an event.
func (s *acpSession) permission(params json.RawMessage) any {
	p := acpObject(params)
	var options []permOption
	_ = json.Unmarshal(p["options"], &options)
	// The request's ToolCallUpdate may leave out what the tool_call said
	// (claude-code-acp sends no kind): merged with what the session knows.
	tc := s.known(p.object("toolCall"))
	a, kind := s.a, tc.kind
	if kind == "" {
		kind = "other"
	}
	what := fmt.Sprintf("%s %q", kind, tc.title)
	policy := a.Agent.Permissions[kind]
	if policy == "" {
		policy = a.Agent.Permissions["default"]
	}
	if policy == "" {
		policy = "ask"
	}
	pick := func(want string) *permOption {
		for i := range options {
			if options[i].Kind == want {
				return &options[i]
			}
		}
		return nil
	}
	switch policy {
	case "allow", "deny":
		want := "allow_once"
		if policy == "deny" {
			want = "reject_once"
		}
		if o := pick(want); o != nil {
			a.Host.Note("permission for %s: %s (%s, by the permissions policy)", what, o.Name, o.OptionID)
			return selected(o.OptionID)
		}
		if policy == "deny" {
			a.Host.Note("permission for %s: refused (the policy denies it; no reject_once option: cancelled)", what)
			return cancelledOutcome()
		}
		// only an "always" option allows it: that is for a person to pick
	}
	return s.askPerson(what, options)
}

// askPerson puts a permission request to the person (an orch question with
// the request's options) and waits for the answer, which names an option
// (PickOption checks it where it is given). An agent that asks faster than
// guardrails.message_rate (the rate of a jsonl agent's question.ask)
// malfunctions: a flood of questions must not reach the person.
func (s *acpSession) askPerson(what string, options []permOption) any {
	a, c := s.a, s.c
	if len(options) == 0 {
		a.Host.Note("permission for %s: cancelled (the request offers no option to pick)", what)
		return cancelledOutcome()
	}
	if !c.asks.Allow() {
		f := attempt.Failf("malfunction", "the agent asked more than %d permission questions a second (guardrails.message_rate)", c.run.MessageRate)
		a.Host.Note("permission for %s: cancelled (%s)", what, f.Reason)
		c.fail(f)
		return cancelledOutcome()
	}
	var q strings.Builder
	fmt.Fprintf(&q, "%s asks permission for %s. Answer with one of:", a.Agent.ID, what)
	choices := make([]record.QuestionOption, len(options))
	for i, o := range options {
		fmt.Fprintf(&q, "\n  %d) %s [%s]", i+1, o.Name, o.Kind)
		choices[i] = record.QuestionOption{ID: o.OptionID, Name: o.Name, Kind: o.Kind}
	}
	answers := make(chan string, 1)
	if f := a.Host.AskPerson(protocols.QuestionAsk{CueID: a.Cue.ID, Question: q.String(), Complexity: "quick"}, choices,
		func(text string) { answers <- text }); f != nil {
		a.Host.Note("permission for %s: cancelled (the question could not be asked: %s)", what, f.Reason)
		return cancelledOutcome()
	}
	select {
	case text := <-answers:
		i, err := record.PickOption(choices, text)
		if err == nil && i >= 0 {
			o := options[i]
			a.Host.Note("permission for %s: %s (%s, answered by the person)", what, o.Name, o.OptionID)
			return selected(o.OptionID)
		}
		// an agent (the parent the question went to) answered otherwise
		a.Host.Note("permission for %s: cancelled (%v)", what, err)
	case <-a.Ended:
		a.Host.Note("permission for %s: cancelled (the attempt ended)", what)
	case <-c.done:
	}
	return cancelledOutcome()
}

func selected(id string) any {
	return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": id}}
}

func cancelledOutcome() any {
	return map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
}
