package protocols

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// MaxDepth is how deeply objects and arrays may nest in a message, the message
// itself counting as 1. encoding/json would go to 10000; a protocol message
// never needs more than a few levels, and the cap bounds the work a hostile
// line can cause.
const MaxDepth = 64

// MaxIDLength is the longest id accepted, in characters (the schema's maxLength).
const MaxIDLength = 256

// The kinds of DecodeError, so the runner can classify a malfunction without
// parsing messages.
const (
	KindNotJSON     = "not-json"     // the line is not one JSON value
	KindNotObject   = "not-object"   // JSON, but not an object
	KindUnknownType = "unknown-type" // message_type names no known type
	KindInvalid     = "invalid"      // a known type, but a field is missing, unknown or wrong
	KindTooLong     = "too-long"     // the line is longer than the Reader's cap
)

// DecodeError is why a line is not a valid message.
type DecodeError struct {
	Kind string // one of the Kind constants
	Err  error  // what was wrong, e.g. "task.failed: missing field error"
	// Line is the start of the offending line (at most lineSnippet bytes), set
	// by Reader so that a log shows what the agent printed.
	Line []byte
}

// lineSnippet is how much of a bad line a DecodeError quotes.
const lineSnippet = 200

func (e *DecodeError) Error() string {
	if len(e.Line) == 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v; line: %q", e.Err, e.Line)
}

func (e *DecodeError) Unwrap() error { return e.Err }

func decodeErr(kind, format string, args ...any) *DecodeError {
	return &DecodeError{Kind: kind, Err: fmt.Errorf(format, args...)}
}

// member is one top-level field of the line: its name and its raw JSON value.
type member struct {
	name string
	raw  []byte
}

// Decode parses one line into a message, strictly (see the package comment).
// Leading and trailing whitespace, including the line's own "\r\n", is
// ignored. Every error is a *DecodeError; Decode never panics.
func Decode(line []byte) (Message, error) {
	// JSON text is UTF-8 (RFC 8259), and encoding/json would quietly turn a
	// bad byte inside a string into U+FFFD: a value the agent never sent.
	if !utf8.Valid(line) {
		at := invalidUTF8At(line)
		return Message{}, decodeErr(KindNotJSON, "not JSON: invalid UTF-8 at byte offset %d (0x%02x)", at, line[at])
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Message{}, decodeErr(KindNotJSON, "empty line")
	}
	if !json.Valid(line) {
		return Message{}, syntaxError(line)
	}
	if line[0] != '{' {
		return Message{}, decodeErr(KindNotObject, "not a JSON object: got %s", describeRaw(line))
	}
	members, err := scanObject(line)
	if err != nil {
		return Message{}, err
	}

	// The envelope: message_type first, so every later error can name the type.
	var envelope [3][]byte // message_type, id, in_reply_to
	for _, m := range members {
		i := -1
		switch m.name {
		case "message_type":
			i = 0
		case "id":
			i = 1
		case "in_reply_to":
			i = 2
		}
		if i >= 0 {
			if envelope[i] != nil {
				return Message{}, decodeErr(KindInvalid, "duplicate field %s", m.name)
			}
			envelope[i] = m.raw
		}
	}
	if envelope[0] == nil {
		return Message{}, decodeErr(KindInvalid, "missing field message_type")
	}
	if envelope[0][0] != '"' {
		return Message{}, decodeErr(KindInvalid, "message_type must be a string, got %s", describeRaw(envelope[0]))
	}
	typ := unquote(envelope[0])
	info := registry().byType[typ]
	if info == nil {
		return Message{}, unknownType(typ)
	}
	msg := Message{Type: typ}
	switch id := envelope[1]; {
	case id == nil:
		return Message{}, decodeErr(KindInvalid, "%s: missing field id", typ)
	case id[0] != '"':
		return Message{}, decodeErr(KindInvalid, "%s: id must be a string, got %s", typ, describeRaw(id))
	default:
		msg.ID = unquote(id)
		if err := checkID(msg.ID); err != nil {
			return Message{}, decodeErr(KindInvalid, "%s: %v", typ, err)
		}
	}
	if r := envelope[2]; r != nil {
		if r[0] != '"' {
			return Message{}, decodeErr(KindInvalid, "%s: in_reply_to must be a string, got %s", typ, describeRaw(r))
		}
		msg.InReplyTo = unquote(r)
	}

	// The body: every other member must be a field of the type's struct.
	body := reflect.New(info.typ).Elem()
	seen := make([]bool, len(info.fields))
	for _, m := range members {
		if m.name == "message_type" || m.name == "id" || m.name == "in_reply_to" {
			continue
		}
		f := info.byName[m.name]
		if f == nil {
			return Message{}, decodeErr(KindInvalid, "%s: unknown field %q%s", typ, clip(m.name, 64), didYouMean(m.name, fieldNames(info)))
		}
		if seen[f.index] {
			return Message{}, decodeErr(KindInvalid, "%s: duplicate field %s", typ, f.name)
		}
		seen[f.index] = true
		if err := setField(body.Field(f.index), f, m.raw); err != nil {
			return Message{}, decodeErr(KindInvalid, "%s: %v", typ, err)
		}
	}
	var missing []string
	for _, f := range info.fields {
		if f.required && !seen[f.index] {
			missing = append(missing, f.name)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return Message{}, decodeErr(KindInvalid, "%s: missing field %s", typ, missing[0])
	default:
		return Message{}, decodeErr(KindInvalid, "%s: missing fields %s", typ, strings.Join(missing, ", "))
	}
	if err := checkConstraints(info, body, seen); err != nil {
		return Message{}, decodeErr(KindInvalid, "%s: %v", typ, err)
	}
	msg.Body = body.Interface().(Body)
	return msg, nil
}

// syntaxError explains why line is not JSON. It runs only on the error path:
// json.Valid says no more than yes or no.
func syntaxError(line []byte) *DecodeError {
	var raw json.RawMessage
	err := json.Unmarshal(line, &raw)
	var se *json.SyntaxError
	switch {
	case err == nil: // cannot happen: json.Valid said no
		return decodeErr(KindNotJSON, "not JSON")
	case errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value"):
		return decodeErr(KindNotJSON, "not one JSON value: something follows it at byte %d", se.Offset)
	case errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end"):
		return decodeErr(KindNotJSON, "not JSON: the line ends in the middle of a value")
	case errors.As(err, &se):
		return decodeErr(KindNotJSON, "not JSON: %s (at byte %d)", se.Error(), se.Offset)
	default:
		return decodeErr(KindNotJSON, "not JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// invalidUTF8At returns the offset of the first byte of line that is not
// part of valid UTF-8 (line must hold one).
func invalidUTF8At(line []byte) int {
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return 0
}

// scanObject splits a valid JSON object into its top-level members, in order,
// and enforces MaxDepth. It relies on the line being valid JSON (json.Valid),
// so it only tracks strings, nesting, ':' and ','. One pass, no reflection:
// this is what lets Decode see exact field names and duplicates, which
// json.Unmarshal into a map or struct would hide.
func scanObject(line []byte) ([]member, error) {
	members := make([]member, 0, 8)
	depth := 0
	inString, escaped := false, false
	expectKey := false // at depth 1, the next string is a member name
	keyStart, valStart := -1, -1
	name := ""
	for i, c := range line {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if keyStart >= 0 {
					name = unquote(line[keyStart : i+1])
					keyStart = -1
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			if depth == 1 && expectKey {
				keyStart, expectKey = i, false
			}
		case '{', '[':
			depth++
			if depth > MaxDepth {
				return nil, decodeErr(KindInvalid, "nested more than %d levels deep", MaxDepth)
			}
			if depth == 1 {
				expectKey = true
			}
		case '}', ']':
			if depth == 1 && valStart >= 0 {
				members = append(members, member{name, bytes.TrimSpace(line[valStart:i])})
				valStart = -1
			}
			depth--
		case ':':
			if depth == 1 {
				valStart = i + 1
			}
		case ',':
			if depth == 1 {
				members = append(members, member{name, bytes.TrimSpace(line[valStart:i])})
				valStart, expectKey = -1, true
			}
		}
	}
	return members, nil
}

// unquote returns the string a JSON string literal stands for. Plain ASCII
// without escapes, by far the common case, is sliced out directly; anything
// else goes through encoding/json, which also turns invalid UTF-8 into U+FFFD
// (so that what Decode returns, Encode writes back unchanged).
func unquote(raw []byte) string {
	plain := true
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw[1 : len(raw)-1]) // cannot happen for valid JSON
	}
	return s
}

// describeRaw names the JSON type of a raw value, for "got ..." in errors.
func describeRaw(raw []byte) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func unknownType(typ string) *DecodeError {
	if typ == "" {
		return decodeErr(KindUnknownType, "message_type is empty")
	}
	return decodeErr(KindUnknownType, "unknown message type %q%s", clip(typ, 64), didYouMean(typ, registry().types))
}

func fieldNames(info *typeInfo) []string {
	names := []string{"message_type", "id", "in_reply_to"}
	for _, f := range info.fields {
		names = append(names, f.name)
	}
	return names
}
