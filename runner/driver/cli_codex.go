package driver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/record"
)

// protocol: codex runs Codex headless:
//
//	codex exec --json --skip-git-repo-check [permission flags] - < prompt
//
// (- reads the prompt from stdin; --skip-git-repo-check because an
// attempt's workspace need not be a git repository.) The stream is the one
// codex documents for exec --json (codex-rs/exec/src/exec_events.rs, one
// ThreadEvent a line): {"type":"thread.started","thread_id"},
// "turn.started", "item.started"/"item.updated"/"item.completed" with an
// item {id, type: agent_message {text} | reasoning {text} |
// command_execution {command, exit_code, status} | file_change {changes} |
// mcp_tool_call {server, tool, status} | web_search {query} | todo_list
// {items} | error {message}}, then "turn.completed" {usage: {input_tokens,
// cached_input_tokens, output_tokens}} or "turn.failed" {error: {message}};
// "error" {message} is an unrecoverable error of the stream. Codex reports
// tokens, no cost.
func init() {
	registerCLI("codex", &cliProtocol{name: "codex", mcpArgs: (*mcpbridge.Attachment).CodexArgs,
		args: []string{"exec", "--json", "--skip-git-repo-check"}, tail: []string{"-"}, event: codexEvent})
}

type codexMessage struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage struct {
		InputTokens  int64 `json:"input_tokens"`
		CachedInput  int64 `json:"cached_input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	Item struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Text     string `json:"text"`
		Command  string `json:"command"`
		ExitCode *int   `json:"exit_code"`
		Status   string `json:"status"`
		Server   string `json:"server"`
		Tool     string `json:"tool"`
		Query    string `json:"query"`
		Message  string `json:"message"`
		Changes  []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"changes"`
		Items []json.RawMessage `json:"items"`
	} `json:"item"`
}

func codexEvent(s *cliStream, line []byte) error {
	var m codexMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return fmt.Errorf("not a codex event: %v", err)
	}
	switch m.Type {
	case "":
		return fmt.Errorf("an event without a type")
	case "thread.started":
		s.setSession(m.ThreadID)
		s.a.Host.Log("stdout", "codex: thread "+m.ThreadID)
	case "turn.started":
	case "item.started", "item.updated", "item.completed":
		codexItem(s, &m)
	case "turn.completed":
		s.a.Host.Usage(record.Usage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens}) // codex reports no cost
		s.mu.Lock()
		text := s.text
		s.mu.Unlock()
		s.finish(text, nil)
	case "turn.failed":
		s.finish("", attempt.Failf("error", "codex's turn failed: %s", oneLine(m.Error.Message)))
	case "error":
		s.fail(attempt.Failf("error", "codex: %s", oneLine(m.Message)))
		s.a.Host.Log("stdout", "error: "+oneLine(m.Message))
	default:
		s.a.Host.Log("stdout", "codex: "+m.Type)
	}
	return nil
}

// codexItem logs an item in one line (a reply line by line) and keeps the
// last agent message as the reply.
func codexItem(s *cliStream, m *codexMessage) {
	it := m.Item
	done := m.Type == "item.completed"
	switch it.Type {
	case "agent_message":
		if done {
			s.mu.Lock()
			s.text = it.Text
			s.mu.Unlock()
			s.logText(it.Text)
		}
	case "reasoning":
		if done {
			s.a.Host.Log("stdout", "thinking: "+oneLine(it.Text))
		}
	case "command_execution":
		status := it.Status
		if it.ExitCode != nil {
			status = fmt.Sprintf("%s, exit %d", status, *it.ExitCode)
		}
		s.a.Host.Log("stdout", fmt.Sprintf("tool: $ %s [execute] %s", oneLine(it.Command), status))
	case "file_change":
		var files []string
		for _, c := range it.Changes {
			files = append(files, c.Kind+" "+c.Path)
		}
		s.a.Host.Log("stdout", fmt.Sprintf("tool: %s [edit] %s", oneLine(strings.Join(files, ", ")), it.Status))
	case "mcp_tool_call":
		s.a.Host.Log("stdout", fmt.Sprintf("tool: %s/%s [mcp] %s", it.Server, it.Tool, it.Status))
	case "web_search":
		s.a.Host.Log("stdout", fmt.Sprintf("tool: %s [fetch]", oneLine(it.Query)))
	case "todo_list":
		s.a.Host.Log("stdout", fmt.Sprintf("plan: %d entries", len(it.Items)))
	case "error":
		s.a.Host.Log("stdout", "error: "+oneLine(it.Message))
	default:
		if done {
			s.a.Host.Log("stdout", "codex: item "+it.Type)
		}
	}
}
