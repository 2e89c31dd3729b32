package mockmodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var script = Script{
	{Text: "Writing.", Write: &File{Path: "hello.txt", Content: "hi\n"}, InputTokens: 7, OutputTokens: 3},
	{Text: "Running.", Shell: "echo hi > shell.txt", Escalate: true},
	{Text: "Done."},
}

func start(t *testing.T) *Server {
	t.Helper()
	dump := t.TempDir()
	s, err := Start(Config{Scripts: map[string]Script{"s": script}, Dump: dump})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL %s: not on loopback", s.URL)
	}
	return s
}

// post sends body and returns the SSE events' data (or the one JSON body).
func post(t *testing.T, s *Server, path string, body any) (int, []map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, append(out, m)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("data line %q: %v", data, err)
			}
			out = append(out, m)
		}
	}
	return resp.StatusCode, out
}

func find(events []map[string]any, typ string) map[string]any {
	for _, e := range events {
		if e["type"] == typ {
			return e
		}
	}
	return nil
}

func TestAnthropic(t *testing.T) {
	s := start(t)
	tools := []any{map[string]any{"name": "Write"}, map[string]any{"name": "mcp__acp__Bash"}}
	sys := []any{map[string]any{"type": "text", "text": "# Environment\n - Primary working directory: /work/p\n"}}
	user := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": Marker("s") + " go"}}}
	req := map[string]any{"model": "claude-x", "stream": true, "tools": tools, "system": sys, "messages": []any{user}}
	_, events := post(t, s, "/v1/messages?beta=true", req)
	start := find(events, "message_start")
	if start == nil || obj(obj(start["message"])["usage"])["input_tokens"] != 7.0 {
		t.Errorf("message_start: %v", start)
	}
	var call map[string]any
	var args string
	for _, e := range events {
		if b := obj(e["content_block"]); b["type"] == "tool_use" {
			call = b
		}
		if d := obj(e["delta"]); d["type"] == "input_json_delta" {
			args = str(d["partial_json"])
		}
	}
	if call["name"] != "Write" || args != `{"content":"hi\n","file_path":"/work/p/hello.txt"}` {
		t.Errorf("turn 0: tool_use %v with %s", call, args)
	}
	if d := find(events, "message_delta"); obj(d["delta"])["stop_reason"] != "tool_use" || obj(d["usage"])["output_tokens"] != 3.0 {
		t.Errorf("message_delta: %v", d)
	}
	// One tool result: turn 1, the shell (an MCP-style name is matched).
	result := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "x", "content": "ok"}}}
	req["messages"] = []any{user, map[string]any{"role": "assistant", "content": []any{}}, result}
	_, events = post(t, s, "/v1/messages", req)
	if !strings.Contains(eventsText(events), `mcp__acp__Bash`) || !strings.Contains(eventsText(events), `echo hi`) {
		t.Errorf("turn 1: %s", eventsText(events))
	}
	// Not streamed: one Message. Past the script's end, its last turn.
	req["stream"] = false
	req["messages"] = []any{user, result, result, result}
	_, msg := post(t, s, "/v1/messages", req)
	if msg[0]["stop_reason"] != "end_turn" || !strings.Contains(eventsText(msg), "Done.") {
		t.Errorf("the last turn, not streamed: %v", msg)
	}
	log := s.Requests()
	if len(log) != 3 || log[0].Script != "s" || log[0].Turn != 0 || log[1].Turn != 1 || log[2].Turn != 3 || log[0].Cwd != "/work/p" ||
		log[0].Call != "Write /work/p/hello.txt" || log[1].Call != "mcp__acp__Bash echo hi > shell.txt" {
		t.Errorf("the request log: %+v", log)
	}
	dumped, _ := filepath.Glob(filepath.Join(s.cfg.Dump, "*"))
	if len(dumped) != 6 {
		t.Errorf("dumped %v, want a body and a summary per request", dumped)
	}
}

func eventsText(events []map[string]any) string {
	b, _ := json.Marshal(events)
	return string(b)
}

func TestResponses(t *testing.T) {
	s := start(t)
	tools := []any{
		map[string]any{"type": "custom", "name": "apply_patch"},
		map[string]any{"type": "function", "name": "exec_command"},
	}
	env := map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text",
		"text": "<environment_context>\n  <cwd>/work/q</cwd>\n</environment_context>"}}}
	user := map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": Marker("s")}}}
	req := map[string]any{"model": "gpt-x", "stream": true, "tools": tools, "input": []any{env, user}}
	_, events := post(t, s, "/v1/responses", req)
	var item map[string]any
	for _, e := range events {
		if e["type"] == "response.output_item.done" && obj(e["item"])["type"] == "custom_tool_call" {
			item = obj(e["item"])
		}
	}
	if item["name"] != "apply_patch" || item["input"] != "*** Begin Patch\n*** Add File: /work/q/hello.txt\n+hi\n*** End Patch\n" || item["call_id"] == "" {
		t.Errorf("turn 0: %v", item)
	}
	done := find(events, "response.completed")
	if u := obj(obj(done["response"])["usage"]); u["input_tokens"] != 7.0 || u["output_tokens"] != 3.0 || u["total_tokens"] != 10.0 {
		t.Errorf("response.completed: %v", done)
	}
	req["input"] = []any{env, user, map[string]any{"type": "custom_tool_call_output", "call_id": "c", "output": "ok"}}
	_, events = post(t, s, "/v1/responses", req)
	for _, e := range events {
		if e["type"] == "response.output_item.done" && obj(e["item"])["type"] == "function_call" {
			item = obj(e["item"])
		}
	}
	var args map[string]any
	_ = json.Unmarshal([]byte(str(item["arguments"])), &args)
	if item["name"] != "exec_command" || args["cmd"] != "echo hi > shell.txt" || args["sandbox_permissions"] != "require_escalated" {
		t.Errorf("turn 1: %v", item)
	}
	if find(events, "response.output_text.delta")["delta"] != "Running." {
		t.Errorf("turn 1's text: %s", eventsText(events))
	}
}

func TestGemini(t *testing.T) {
	s := start(t)
	tools := []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "write_file"}, map[string]any{"name": "run_shell_command"}}}}
	ctx := map[string]any{"role": "user", "parts": []any{map[string]any{"text": "- **Workspace Directories:**\n  - /work/g\n"},
		map[string]any{"text": Marker("s")}}}
	req := map[string]any{"contents": []any{ctx}, "tools": tools}
	_, events := post(t, s, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", req)
	parts := list(obj(obj(list(events[0]["candidates"])[0])["content"])["parts"])
	call := obj(obj(parts[1])["functionCall"])
	if call["name"] != "write_file" || obj(call["args"])["file_path"] != "/work/g/hello.txt" {
		t.Errorf("turn 0: %v", events)
	}
	if u := obj(events[0]["usageMetadata"]); u["promptTokenCount"] != 7.0 || u["candidatesTokenCount"] != 3.0 {
		t.Errorf("usage: %v", u)
	}
	// gemini-cli's own checks ask for JSON by a schema: a value it accepts.
	schema := map[string]any{"type": "OBJECT", "properties": map[string]any{
		"next_speaker":     map[string]any{"type": "STRING", "enum": []any{"model", "user"}},
		"complexity_score": map[string]any{"type": "INTEGER"},
		"confidence":       map[string]any{"type": "NUMBER"},
		"reasoning":        map[string]any{"type": "STRING"},
	}}
	check := map[string]any{"contents": []any{ctx}, "generationConfig": map[string]any{"responseMimeType": "application/json", "responseJsonSchema": schema}}
	_, body := post(t, s, "/v1beta/models/gemini-x:generateContent", check)
	text := str(obj(list(obj(obj(list(body[0]["candidates"])[0])["content"])["parts"])[0])["text"])
	if text != `{"complexity_score":1,"confidence":0,"next_speaker":"user","reasoning":"mock"}` {
		t.Errorf("the JSON check's answer: %s", text)
	}
	if log := s.Requests(); log[1].Script != "" {
		t.Errorf("the check was answered from script %q, want none (auxiliary)", log[1].Script)
	}
}

func TestBadRequests(t *testing.T) {
	s := start(t)
	if code, _ := post(t, s, "/v1/chat/completions", map[string]any{}); code != http.StatusNotFound {
		t.Errorf("an unknown path: %d", code)
	}
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader("{"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: %d", resp.StatusCode)
	}
	// A conversation that names no script, or one the server does not know,
	// gets a reply saying so.
	req := map[string]any{"stream": true, "tools": []any{map[string]any{"name": "Write"}},
		"messages": []any{map[string]any{"role": "user", "content": Marker("nope")}}}
	_, events := post(t, s, "/v1/messages", req)
	if !strings.Contains(eventsText(events), `no script named \"nope\"`) {
		t.Errorf("an unknown script: %s", eventsText(events))
	}
	// A write the request offers no tool for.
	req["messages"] = []any{map[string]any{"role": "user", "content": Marker("s") + " Primary working directory: /w\n"}}
	req["tools"] = []any{map[string]any{"name": "Read"}}
	_, events = post(t, s, "/v1/messages", req)
	if !strings.Contains(eventsText(events), "offers no tool to write a file (tools: Read)") {
		t.Errorf("no tool to write with: %s", eventsText(events))
	}
	// No tools at all: an auxiliary request (a title, a summary), "ok".
	delete(req, "tools")
	_, events = post(t, s, "/v1/messages", req)
	if !strings.Contains(eventsText(events), `"text":"ok"`) {
		t.Errorf("an auxiliary request: %s", eventsText(events))
	}
	if _, err := os.Stat(s.cfg.Dump); err != nil {
		t.Error(err)
	}
}

// TestPhrases: a prompt without a marker follows the script of the first
// phrase it holds; a marker wins over a phrase; no phrase, no script.
func TestPhrases(t *testing.T) {
	s, err := Start(Config{Scripts: map[string]Script{"plan": {{Text: "Planned."}}, "review": {{Text: "Reviewed."}}, "s": script},
		Phrases: []Phrase{{Text: "You are the planner.", Script: "plan"}, {Text: "the reviewer", Script: "review"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for prompt, want := range map[string]string{
		"You are the planner. Split the feature; the reviewer reads it.": "plan",
		"You are the reviewer.":                "review",
		Marker("s") + " You are the reviewer.": "s",
		"You are someone else.":                "",
	} {
		req := map[string]any{"stream": true, "tools": []any{map[string]any{"name": "Write"}},
			"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": prompt}}}}}
		post(t, s, "/v1/messages", req)
		log := s.Requests()
		if got := log[len(log)-1].Script; got != want {
			t.Errorf("%q was answered from script %q, want %q", prompt, got, want)
		}
	}
}

// TestAnthropicNamedTool: a turn calls an MCP tool by its name with an
// argument taken from the previous tool result's JSON.
func TestAnthropicNamedTool(t *testing.T) {
	s, err := Start(Config{Scripts: map[string]Script{"mcp": {
		{Tool: &ToolCall{Name: "run", Args: map[string]any{"cuelist": "c.yaml"}}},
		{Tool: &ToolCall{Name: "wait", Args: map[string]any{"run": "{{run}}", "question": "{{inbox.0.id}}", "n": 3.0}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools := []any{map[string]any{"name": "mcp__orch__run"}, map[string]any{"name": "mcp__orch__wait"}}
	user := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": Marker("mcp")}}}
	_, events := post(t, s, "/v1/messages", map[string]any{"tools": tools, "messages": []any{user}})
	if c := obj(list(events[0]["content"])[0]); c["name"] != "mcp__orch__run" || obj(c["input"])["cuelist"] != "c.yaml" {
		t.Fatalf("turn 0: %v", events[0])
	}
	result := func(text any) map[string]any {
		return map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": text}}}
	}
	asked := []any{user, result(`{"run": "abc", "inbox": []}`), result([]any{map[string]any{"type": "text", "text": `{"inbox": [{"id": "q1"}]}`}})}
	_, events = post(t, s, "/v1/messages", map[string]any{"tools": tools, "messages": asked})
	in := obj(obj(list(events[0]["content"])[0])["input"])
	if in["run"] != "abc" || in["question"] != "q1" || in["n"] != 3.0 {
		t.Errorf("turn 1's arguments: %v, want run abc (the first result), question q1 (the latest)", in)
	}
	_, events = post(t, s, "/v1/messages", map[string]any{"tools": tools, "messages": []any{user, result("{}"), result("{}")}})
	if text := str(obj(list(events[0]["content"])[0])["text"]); !strings.Contains(text, "no tool result has inbox.0.id (for wait's question)") {
		t.Errorf("a reference no result has: %v", events[0])
	}
}
