package mockmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// anthropic is the Messages API (docs.anthropic.com, "Streaming
// Messages"): message_start, a content block per text or tool_use (its
// input as one input_json_delta), message_delta with the stop reason and
// the output tokens, message_stop. A request without "stream": true gets
// the message as one JSON object.
type anthropic struct{}

func (anthropic) tools(doc map[string]any) []string {
	var names []string
	for _, t := range list(doc["tools"]) {
		if n := str(obj(t)["name"]); n != "" {
			names = append(names, n)
		}
	}
	return names
}

func (anthropic) wantsJSON(map[string]any) bool { return false }

// toolResults counts the tool_result blocks of the conversation.
func (anthropic) toolResults(doc map[string]any) int {
	n := 0
	for _, m := range list(doc["messages"]) {
		for _, b := range list(obj(m)["content"]) {
			if str(obj(b)["type"]) == "tool_result" {
				n++
			}
		}
	}
	return n
}

func (h anthropic) call(t Turn, a *answer) (*toolCall, error) {
	if t.Tool != nil {
		return called(t.Tool, a.req, h.resultTexts(a.doc))
	}
	return namedCall(t, a.req, "Write", "Bash")
}

// resultTexts are the texts of the conversation's tool_result blocks.
func (anthropic) resultTexts(doc map[string]any) []string {
	var out []string
	for _, m := range list(doc["messages"]) {
		for _, b := range list(obj(m)["content"]) {
			if str(obj(b)["type"]) != "tool_result" {
				continue
			}
			if s, ok := obj(b)["content"].(string); ok {
				out = append(out, s)
				continue
			}
			var parts []string
			for _, c := range list(obj(b)["content"]) {
				parts = append(parts, str(obj(c)["text"]))
			}
			out = append(out, strings.Join(parts, ""))
		}
	}
	return out
}

func (h anthropic) aux(w http.ResponseWriter, a *answer) {
	a.text, a.in, a.out = "ok", 10, 1
	a.logged()
	h.reply(w, a)
}

// message is the whole answer as one Message object.
func (anthropic) message(a *answer) map[string]any {
	content := []any{}
	if a.text != "" {
		content = append(content, map[string]any{"type": "text", "text": a.text})
	}
	stop := "end_turn"
	if c := a.call; c != nil {
		content = append(content, map[string]any{"type": "tool_use", "id": a.s.id("toolu"), "name": c.name, "input": c.args})
		stop = "tool_use"
	}
	return map[string]any{"id": a.s.id("msg"), "type": "message", "role": "assistant", "model": orDefault(str(a.doc["model"]), "claude-mock"),
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": a.in, "output_tokens": a.out}}
}

func (h anthropic) reply(w http.ResponseWriter, a *answer) {
	if a.doc["stream"] != true {
		writeJSON(w, h.message(a))
		return
	}
	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": a.s.id("msg"), "type": "message", "role": "assistant", "model": orDefault(str(a.doc["model"]), "claude-mock"),
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": a.in, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	index := 0
	if a.text != "" {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": a.text}})
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := "end_turn"
	if c := a.call; c != nil {
		args, _ := json.Marshal(c.args)
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": a.s.id("toolu"), "name": c.name, "input": map[string]any{}}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		stop = "tool_use"
	}
	e.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": a.out}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

func orDefault(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
