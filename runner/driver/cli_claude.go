package driver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/record"
)

// protocol: claude-code runs Claude Code headless:
//
//	claude -p --output-format stream-json --verbose [permission flags] < prompt
//
// The stream is the one Claude Code documents for --output-format
// stream-json (the Agent SDK's message types, one JSON object a line):
// {"type":"system","subtype":"init","session_id",...}, then "assistant"
// messages (message.content blocks: text, tool_use {name, input}, thinking)
// and "user" messages (tool_result blocks), and last one
// {"type":"result","subtype":"success"|"error_max_turns"|
// "error_during_execution"|...,"is_error","result","session_id",
// "num_turns","total_cost_usd","usage":{"input_tokens","output_tokens",
// "cache_creation_input_tokens","cache_read_input_tokens"}}.
func init() {
	registerCLI("claude-code", &cliProtocol{name: "claude",
		mcpArgs: func(m *mcpbridge.Attachment) ([]string, error) { return m.ClaudeArgs(), nil },
		args:    []string{"-p", "--output-format", "stream-json", "--verbose"}, event: claudeEvent})
}

type claudeMessage struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Message   struct {
		// A list of content blocks, or (a user's prompt) a string.
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	IsError      bool     `json:"is_error"`
	Result       string   `json:"result"`
	Errors       []any    `json:"errors"`
	NumTurns     int      `json:"num_turns"`
	TotalCostUSD *float64 `json:"total_cost_usd"`
	Usage        struct {
		InputTokens   int64 `json:"input_tokens"`
		OutputTokens  int64 `json:"output_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

func claudeEvent(s *cliStream, line []byte) error {
	var m claudeMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return fmt.Errorf("not a Claude Code message: %v", err)
	}
	if m.Type == "" {
		return fmt.Errorf("a message without a type")
	}
	switch m.Type {
	case "system":
		if m.Subtype == "init" {
			s.setSession(m.SessionID)
			s.a.Host.Log("stdout", fmt.Sprintf("claude: session %s, model %s", m.SessionID, m.Model))
		}
	case "assistant", "user":
		var blocks []struct {
			Type     string          `json:"type"`
			Text     string          `json:"text"`
			Thinking string          `json:"thinking"`
			Name     string          `json:"name"`
			Input    json.RawMessage `json:"input"`
			IsError  bool            `json:"is_error"`
		}
		_ = json.Unmarshal(m.Message.Content, &blocks) // a string content is the prompt: nothing to show
		for _, c := range blocks {
			switch c.Type {
			case "text":
				s.logText(c.Text)
			case "thinking":
				s.a.Host.Log("stdout", "thinking: "+oneLine(c.Thinking))
			case "tool_use":
				s.a.Host.Log("stdout", fmt.Sprintf("tool: %s %s", c.Name, oneLine(toolInput(c.Input))))
			case "tool_result":
				if c.IsError {
					s.a.Host.Log("stdout", "tool failed")
				}
			}
		}
	case "result":
		s.setSession(m.SessionID)
		u := record.Usage{InputTokens: m.Usage.InputTokens + m.Usage.CacheCreation + m.Usage.CacheRead, OutputTokens: m.Usage.OutputTokens}
		if m.TotalCostUSD != nil {
			u.CostUSD = *m.TotalCostUSD
		}
		s.a.Host.Usage(u) // counts toward the run's usage and limits.max_cost_usd
		if !m.IsError && m.Subtype == "success" {
			s.finish(m.Result, nil)
			return nil
		}
		class := m.Subtype
		if !strings.HasPrefix(class, "error_") {
			class = "error"
		}
		why := m.Result
		if len(m.Errors) > 0 {
			var errs []string
			for _, e := range m.Errors {
				errs = append(errs, attempt.PromptValue(e))
			}
			why = strings.Join(errs, "; ")
		}
		if why != "" {
			why = ": " + oneLine(why)
		}
		s.finish("", attempt.Failf(class, "claude ended with %s after %d turn(s)%s", orText(m.Subtype, "an error"), m.NumTurns, why))
	default:
		s.a.Host.Log("stdout", "claude: "+m.Type)
	}
	return nil
}

// toolInput is a tool call's input in one line: its command, file or
// pattern when it has one, else its JSON.
func toolInput(raw json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil {
		return string(raw)
	}
	for _, k := range []string{"command", "file_path", "pattern", "url", "query", "path"} {
		if v, ok := in[k].(string); ok {
			return v
		}
	}
	return string(raw)
}

func orText(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
