package protocols

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// Encode writes m as one line: a JSON object with the envelope first
// (message_type, id, in_reply_to when set), then the body's fields, then
// '\n'. A line never breaks inside a value: JSON escapes newlines in strings.
//
// Encode checks what Decode checks, so that orch and Go agents never send what
// the other side would reject: a known body type that agrees with m.Type, a
// valid id, the schema's enums and minimums, and MaxDepth. Maps and slices
// that a body always carries (non-omitempty) are written as {} or [] when
// nil, never as null. HTML characters are not escaped (no \u003c for '<'):
// the line is read by programs, and sometimes by people.
func Encode(m Message) ([]byte, error) {
	typ := bodyType(m.Body)
	if typ == "" {
		return nil, errors.New("encode: message has no body")
	}
	info := registry().byType[typ]
	if info == nil {
		return nil, fmt.Errorf("encode: unknown message type %q", typ)
	}
	body := reflect.Indirect(reflect.ValueOf(m.Body))
	if body.Type() != info.typ {
		return nil, fmt.Errorf("encode: a %s is not the body of %s (want %s)", body.Type(), typ, info.typ)
	}
	if m.Type != "" && m.Type != typ {
		return nil, fmt.Errorf("encode: message type %q does not match its %s body", m.Type, typ)
	}
	if err := checkID(m.ID); err != nil {
		return nil, fmt.Errorf("encode %s: %v", typ, err)
	}
	if err := checkConstraints(info, body, nil); err != nil {
		return nil, fmt.Errorf("encode %s: %v", typ, err)
	}
	body = fillEmpty(info, body)

	var buf bytes.Buffer
	buf.Grow(128)
	buf.WriteString(`{"message_type":"`)
	buf.WriteString(typ) // a known type: no character needs escaping
	buf.WriteString(`","id":`)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m.ID); err != nil {
		return nil, err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	if m.InReplyTo != "" {
		buf.WriteString(`,"in_reply_to":`)
		if err := enc.Encode(m.InReplyTo); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1)
	}
	mark := buf.Len()
	if err := enc.Encode(body.Interface()); err != nil {
		return nil, fmt.Errorf("encode %s: %v", typ, err) // e.g. NaN, a channel in Outputs
	}
	// The body was written as {...}\n after the envelope: turn its '{' into
	// the ',' that joins the two, or drop an empty {} altogether.
	line := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(line)-mark > 2 {
		line[mark] = ','
	} else {
		line = append(line[:mark], '}')
	}
	if tooDeep(line) {
		return nil, fmt.Errorf("encode %s: nested more than %d levels deep", typ, MaxDepth)
	}
	return append(line, '\n'), nil
}

// fillEmpty returns body with nil non-omitempty maps and slices replaced by
// empty ones. It copies the body only when there is something to fill.
func fillEmpty(info *typeInfo, body reflect.Value) reflect.Value {
	var out reflect.Value
	for _, f := range info.fields {
		if f.omitempty {
			continue
		}
		if k := f.typ.Kind(); (k != reflect.Map && k != reflect.Slice) || !body.Field(f.index).IsNil() {
			continue
		}
		if !out.IsValid() {
			out = reflect.New(info.typ).Elem()
			out.Set(body)
		}
		if f.typ.Kind() == reflect.Map {
			out.Field(f.index).Set(reflect.MakeMap(f.typ))
		} else {
			out.Field(f.index).Set(reflect.MakeSlice(f.typ, 0, 0))
		}
	}
	if out.IsValid() {
		return out
	}
	return body
}

// tooDeep reports whether objects and arrays in the JSON text b nest more
// than MaxDepth levels.
func tooDeep(b []byte) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > MaxDepth {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// MarshalJSON writes inputs and blackboard as {} and tools as [] when they are
// nil: the schema wants an object and an array there, and an agent should be
// able to use them without checking for null.
func (t Task) MarshalJSON() ([]byte, error) {
	if t.Inputs == nil {
		t.Inputs = map[string]any{}
	}
	if t.Blackboard == nil {
		t.Blackboard = map[string]any{}
	}
	if t.Tools == nil {
		t.Tools = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as Encode: keep '<' and '&' readable
	if err := enc.Encode(taskJSON(t)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
