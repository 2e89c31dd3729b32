package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orch-cli/orch/protocols"
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
		// ACP's "Resource not found": gemini --acp reads a file before it
		// writes it and takes only this (or ENOENT) for "a new file".
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
	s.a.log("stdout", fmt.Sprintf("wrote %s (%d bytes)", rel, len(p.Content)))
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
	var p struct {
		ToolCall struct {
			Title string `json:"title"`
			Kind  string `json:"kind"`
		} `json:"toolCall"`
		Options []permOption `json:"options"`
	}
	_ = json.Unmarshal(params, &p)
	a, kind := s.a, p.ToolCall.Kind
	if kind == "" {
		kind = "other"
	}
	what := fmt.Sprintf("%s %q", kind, p.ToolCall.Title)
	policy := a.agent.Permissions[kind]
	if policy == "" {
		policy = a.agent.Permissions["default"]
	}
	if policy == "" {
		policy = "ask"
	}
	pick := func(want string) *permOption {
		for i := range p.Options {
			if p.Options[i].Kind == want {
				return &p.Options[i]
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
			a.note("permission for %s: %s (%s, by the permissions policy)", what, o.Name, o.OptionID)
			return selected(o.OptionID)
		}
		if policy == "deny" {
			a.note("permission for %s: refused (the policy denies it; no reject_once option: cancelled)", what)
			return cancelledOutcome()
		}
		// only an "always" option allows it: that is for a person to pick
	}
	return s.askPerson(what, p.Options)
}

// askPerson puts a permission request to the person (an orch question) and
// waits for the answer: an option's number, id or name.
func (s *acpSession) askPerson(what string, options []permOption) any {
	a := s.a
	var q strings.Builder
	fmt.Fprintf(&q, "%s asks permission for %s. Answer with one of:", a.agent.ID, what)
	for i, o := range options {
		fmt.Fprintf(&q, "\n  %d) %s [%s]", i+1, o.Name, o.Kind)
	}
	answers := make(chan string, 1)
	if f := a.r.askPerson(a, protocols.QuestionAsk{CueID: a.cue.ID, Question: q.String(), Complexity: "quick"},
		func(text string) { answers <- text }); f != nil {
		a.note("permission for %s: cancelled (the question could not be asked: %s)", what, f.reason)
		return cancelledOutcome()
	}
	select {
	case text := <-answers:
		if o := matchOption(options, text); o != nil {
			a.note("permission for %s: %s (%s, answered by the person)", what, o.Name, o.OptionID)
			return selected(o.OptionID)
		}
		a.note("permission for %s: cancelled (the answer %q names no option)", what, text)
	case <-a.ended:
		a.note("permission for %s: cancelled (the attempt ended)", what)
	case <-s.c.done:
	}
	return cancelledOutcome()
}

func matchOption(options []permOption, answer string) *permOption {
	answer = strings.TrimSpace(answer)
	if n, err := strconv.Atoi(answer); err == nil && n >= 1 && n <= len(options) {
		return &options[n-1]
	}
	for i, o := range options {
		if strings.EqualFold(answer, o.OptionID) || strings.EqualFold(answer, o.Name) {
			return &options[i]
		}
	}
	return nil
}

func selected(id string) any {
	return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": id}}
}

func cancelledOutcome() any {
	return map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
}

// update logs a session/update as the attempt's output: message text as
// it is (line by line), anything else as a one-line summary.
func (s *acpSession) update(params json.RawMessage) {
	var p struct {
		Update struct {
			Kind    string `json:"sessionUpdate"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Title    string            `json:"title"`
			ToolKind string            `json:"kind"`
			Status   string            `json:"status"`
			ID       string            `json:"toolCallId"`
			Entries  []json.RawMessage `json:"entries"`
			// usage_update (ACP's session usage RFD, unstable): the
			// session's cost so far
			Cost *struct {
				Amount   float64 `json:"amount"`
				Currency string  `json:"currency"`
			} `json:"cost"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	u := p.Update
	switch u.Kind {
	case "agent_message_chunk":
		s.mu.Lock()
		s.text.WriteString(u.Content.Text)
		s.partial = append(s.partial, u.Content.Text...)
		var lines []string
		for {
			i := strings.IndexByte(string(s.partial), '\n')
			if i < 0 {
				break
			}
			lines = append(lines, string(s.partial[:i]))
			s.partial = s.partial[i+1:]
		}
		s.mu.Unlock()
		for _, l := range lines {
			s.a.log("stdout", l)
		}
	case "agent_thought_chunk":
		s.a.log("stdout", "thinking: "+oneLine(u.Content.Text))
	case "tool_call":
		s.a.log("stdout", fmt.Sprintf("tool: %s [%s] %s", oneLine(u.Title), u.ToolKind, u.Status))
	case "tool_call_update":
		if u.Status != "" {
			s.a.log("stdout", fmt.Sprintf("tool %s: %s", u.ID, u.Status))
		}
	case "plan":
		s.a.log("stdout", fmt.Sprintf("plan: %d entries", len(u.Entries)))
	case "user_message_chunk":
	case "usage_update":
		// A session serves one attempt: its cost so far is the attempt's.
		if c := u.Cost; c != nil && (c.Currency == "USD" || c.Currency == "") {
			s.a.r.addUsage(s.a, Usage{CostUSD: c.Amount})
		} else if c != nil {
			s.a.log("stdout", fmt.Sprintf("usage: cost %g %s (not counted: orch counts USD)", c.Amount, c.Currency))
		}
	default:
		s.a.log("stdout", "update: "+u.Kind)
	}
}

// flush logs the message text still waiting for its newline.
func (s *acpSession) flush() {
	s.mu.Lock()
	rest := string(s.partial)
	s.partial = nil
	s.mu.Unlock()
	if rest != "" {
		s.a.log("stdout", rest)
	}
}

func oneLine(s string) string { return truncate(strings.Join(strings.Fields(s), " "), 200) }
