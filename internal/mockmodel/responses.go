package mockmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// responses is OpenAI's Responses API as codex streams it
// (platform.openai.com, "Streaming events"; codex-rs reads
// response.output_item.done items and response.completed's usage):
// response.created, each output item added, its text delta and done,
// then response.completed with every item and the usage. A function
// call's arguments are a JSON string; a custom (freeform) tool's call,
// such as codex's apply_patch, carries its input as text.
type responses struct{}

func (responses) tools(doc map[string]any) []string {
	var names []string
	for _, t := range list(doc["tools"]) {
		if n := str(obj(t)["name"]); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// wantsJSON: a structured output (text.format json_schema).
func (responses) wantsJSON(doc map[string]any) bool {
	return str(obj(obj(doc["text"])["format"])["type"]) == "json_schema"
}

// toolResults counts the tool outputs in the request's input.
func (responses) toolResults(doc map[string]any) int {
	n := 0
	for _, it := range list(doc["input"]) {
		if strings.HasSuffix(str(obj(it)["type"]), "call_output") {
			n++
		}
	}
	return n
}

func toolType(doc map[string]any, name string) string {
	for _, t := range list(doc["tools"]) {
		if str(obj(t)["name"]) == name {
			return str(obj(t)["type"])
		}
	}
	return ""
}

func (responses) call(t Turn, a *answer) (*toolCall, error) {
	if t.Tool != nil {
		return nil, errNamedTool
	}
	req := a.req
	if t.Write != nil {
		name := pick(req.Tools, "apply_patch")
		if name == "" {
			return nil, noTool("write a file", req)
		}
		path, err := absolute(t.Write.Path, req)
		if err != nil {
			return nil, err
		}
		patch := addFilePatch(path, t.Write.Content)
		if toolType(a.doc, name) == "custom" {
			return &toolCall{name: name, freeform: patch, custom: true}, nil
		}
		return &toolCall{name: name, args: map[string]any{"input": patch}}, nil
	}
	switch name := pick(req.Tools, "exec_command", "shell_command", "shell"); name {
	case "":
		return nil, noTool("run a shell command", req)
	case "exec_command":
		args := map[string]any{"cmd": t.Shell}
		if t.Escalate {
			args["sandbox_permissions"] = "require_escalated"
			args["justification"] = "May I run " + t.Shell + "?"
		}
		return &toolCall{name: name, args: args}, nil
	case "shell_command":
		return &toolCall{name: name, args: map[string]any{"command": t.Shell}}, nil
	default:
		return &toolCall{name: name, args: map[string]any{"command": []string{"bash", "-lc", t.Shell}}}, nil
	}
}

// addFilePatch is an apply_patch patch that creates path with content.
func addFilePatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, l := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
		b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

func (h responses) aux(w http.ResponseWriter, a *answer) {
	a.text, a.in, a.out = "ok", 10, 1
	if f := obj(obj(a.doc["text"])["format"]); str(f["type"]) == "json_schema" {
		b, _ := json.Marshal(fromSchema(f["schema"], ""))
		a.text = string(b)
	}
	a.logged()
	h.reply(w, a)
}

func (responses) reply(w http.ResponseWriter, a *answer) {
	id := a.s.id("resp")
	model := orDefault(str(a.doc["model"]), "gpt-mock")
	var items []map[string]any
	if a.text != "" {
		items = append(items, map[string]any{"type": "message", "id": a.s.id("msg"), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": a.text, "annotations": []any{}}}})
	}
	if c := a.call; c != nil {
		it := map[string]any{"id": a.s.id("fc"), "call_id": a.s.id("call"), "name": c.name, "status": "completed"}
		if c.custom {
			it["type"], it["input"] = "custom_tool_call", c.freeform
		} else {
			args, _ := json.Marshal(c.args)
			it["type"], it["arguments"] = "function_call", string(args)
		}
		items = append(items, it)
	}
	usage := map[string]any{"input_tokens": a.in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": a.out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": a.in + a.out}
	final := map[string]any{"id": id, "object": "response", "status": "completed", "model": model, "output": items, "usage": usage}
	if a.doc["stream"] != true {
		writeJSON(w, final)
		return
	}
	e := newSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		e.event(typ, fields)
	}
	ev("response.created", map[string]any{"response": map[string]any{"id": id, "object": "response", "status": "in_progress", "model": model, "output": []any{}}})
	for i, it := range items {
		ev("response.output_item.added", map[string]any{"output_index": i, "item": inProgress(it)})
		if it["type"] == "message" {
			ev("response.output_text.delta", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "delta": a.text})
			ev("response.output_text.done", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "text": a.text})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	ev("response.completed", map[string]any{"response": final})
}

// inProgress is an item as response.output_item.added announces it.
func inProgress(it map[string]any) map[string]any {
	c := map[string]any{}
	for k, v := range it {
		c[k] = v
	}
	c["status"] = "in_progress"
	switch it["type"] {
	case "message":
		c["content"] = []any{}
	case "function_call":
		c["arguments"] = ""
	case "custom_tool_call":
		c["input"] = ""
	}
	return c
}
