package mockmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// gemini is the Gemini API's generateContent (one JSON
// GenerateContentResponse) and streamGenerateContent?alt=sse (the same
// objects, one per data line): candidates[0].content.parts holds text and
// functionCall {name, args} parts, finishReason STOP ends the turn,
// usageMetadata counts the tokens.
type gemini struct{ stream bool }

func (gemini) tools(doc map[string]any) []string {
	var names []string
	for _, t := range list(doc["tools"]) {
		for _, f := range list(obj(t)["functionDeclarations"]) {
			if n := str(obj(f)["name"]); n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}

// wantsJSON: gemini-cli's own checks (routing, next speaker, loop
// detection) ask for JSON by a schema.
func (gemini) wantsJSON(doc map[string]any) bool {
	return responseSchema(doc) != nil || str(obj(doc["generationConfig"])["responseMimeType"]) == "application/json"
}

func responseSchema(doc map[string]any) any {
	g := obj(doc["generationConfig"])
	if s, ok := g["responseJsonSchema"]; ok {
		return s
	}
	return g["responseSchema"]
}

// toolResults counts the functionResponse parts of the conversation.
func (gemini) toolResults(doc map[string]any) int {
	n := 0
	for _, c := range list(doc["contents"]) {
		for _, p := range list(obj(c)["parts"]) {
			if _, ok := obj(p)["functionResponse"]; ok {
				n++
			}
		}
	}
	return n
}

func (gemini) call(t Turn, a *answer) (*toolCall, error) {
	if t.Tool != nil {
		return nil, errNamedTool
	}
	return namedCall(t, a.req, "write_file", "run_shell_command")
}

func (h gemini) aux(w http.ResponseWriter, a *answer) {
	a.text, a.in, a.out = "ok", 10, 1
	if h.wantsJSON(a.doc) {
		b, _ := json.Marshal(fromSchema(responseSchema(a.doc), ""))
		a.text = string(b)
	}
	a.logged()
	h.reply(w, a)
}

func (h gemini) reply(w http.ResponseWriter, a *answer) {
	var parts []any
	if a.text != "" {
		parts = append(parts, map[string]any{"text": a.text})
	}
	if c := a.call; c != nil {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.name, "args": c.args, "id": a.s.id("call")}})
	}
	chunk := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": parts}}},
		"usageMetadata": map[string]any{"promptTokenCount": a.in, "candidatesTokenCount": a.out, "totalTokenCount": a.in + a.out},
		"modelVersion":  modelOf(a.req.Path),
		"responseId":    a.s.id("resp"),
	}
	if !h.stream {
		writeJSON(w, chunk)
		return
	}
	newSSE(w).event("", chunk)
}

// modelOf is M of /v1beta/models/M:method.
func modelOf(path string) string {
	m := strings.TrimPrefix(path, "/v1beta/models/")
	if i := strings.IndexByte(m, ':'); i >= 0 {
		m = m[:i]
	}
	return m
}

// fromSchema is a small value a JSON Schema (or Gemini's OpenAPI-style
// schema, types in capitals) accepts: every property, the first of an
// enum, integers 1 and numbers 0 (or their minimum), strings "mock". A property named
// next_speaker is "user": gemini-cli asks whether the model should go on.
func fromSchema(schema any, name string) any {
	s := obj(schema)
	if e := list(s["enum"]); len(e) > 0 {
		if name == "next_speaker" {
			for _, v := range e {
				if v == "user" {
					return v
				}
			}
		}
		return e[0]
	}
	typ := strings.ToLower(str(s["type"]))
	if typ == "" {
		if t := list(s["type"]); len(t) > 0 {
			typ = strings.ToLower(str(t[0]))
		}
	}
	switch typ {
	case "object", "":
		out := map[string]any{}
		for k, v := range obj(s["properties"]) {
			out[k] = fromSchema(v, k)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		if m, ok := s["minimum"].(float64); ok {
			return m
		}
		if typ == "integer" { // a count or a score (gemini's complexity_score is 1 to 100)
			return 1
		}
		return 0 // a fraction (gemini's loop detection confidence)
	case "boolean":
		return false
	case "null":
		return nil
	}
	if name == "next_speaker" {
		return "user"
	}
	return "mock"
}
