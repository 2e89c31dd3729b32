package protocols

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/orch-cli/orch/internal/editdist"
)

// setField decodes one member's raw JSON into a body field. The JSON type is
// checked first, against the field's Go type, because encoding/json is lax
// where a protocol must not be: it turns null into the zero value ("error":
// null would read as an empty error) and would otherwise report type errors in
// Go terms.
// The error starts with "field NAME:" (or a path into it: "field task.attempt:").
func setField(v reflect.Value, f *field, raw []byte) error {
	got := describeRaw(raw)
	switch f.kind {
	case kindString:
		if raw[0] != '"' {
			return fmt.Errorf("field %s: want %s, got %s", f.name, f.kind, got)
		}
		v.SetString(unquote(raw)) // the fast path: no reflection through encoding/json
		return nil
	case kindBool:
		if raw[0] != 't' && raw[0] != 'f' {
			return fmt.Errorf("field %s: want %s, got %s", f.name, f.kind, got)
		}
		v.SetBool(raw[0] == 't')
		return nil
	case kindInteger, kindNumber:
		if got != "a number" {
			return fmt.Errorf("field %s: want %s, got %s", f.name, f.kind, got)
		}
	case kindObject:
		if raw[0] != '{' {
			return fmt.Errorf("field %s: want %s, got %s", f.name, f.kind, got)
		}
	case kindArray:
		if raw[0] != '[' {
			return fmt.Errorf("field %s: want %s, got %s", f.name, f.kind, got)
		}
	}
	if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
		return explain(err, f)
	}
	return nil
}

// explain rewrites an encoding/json error in the protocol's terms.
func explain(err error, f *field) error {
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) {
		return fmt.Errorf("field %s: %s", f.name, strings.TrimPrefix(err.Error(), "json: "))
	}
	path := f.name
	if ute.Field != "" {
		path += "." + ute.Field
	}
	num, isNum := strings.CutPrefix(ute.Value, "number ")
	switch {
	case isNum && f.kind == kindInteger && ute.Field == "":
		return fmt.Errorf("field %s: %s is not an integer in range", path, clip(num, 64))
	case isNum:
		return fmt.Errorf("field %s: number %s is out of range", path, clip(num, 64))
	default:
		return fmt.Errorf("field %s: want %s, got %s", path, goKind(ute.Type), jsonWord(ute.Value))
	}
}

// jsonWord adds the article to encoding/json's name of a JSON type.
func jsonWord(v string) string {
	switch v {
	case "object", "array":
		return "an " + v
	case "bool":
		return "a boolean"
	case "string", "number":
		return "a " + v
	}
	return v
}

// goKind names, in JSON terms, the Go type encoding/json wanted.
func goKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return t.String()
}

// checkConstraints checks what the schema says beyond JSON types: non-empty
// strings, minimums and enums, for the fields that are on the wire. Decode
// passes seen, the fields the line had; Encode passes nil, and a field is on
// the wire unless it is omitempty and zero.
func checkConstraints(info *typeInfo, body reflect.Value, seen []bool) error {
	for _, f := range info.fields {
		v := body.Field(f.index)
		if seen != nil && !seen[f.index] || seen == nil && f.omitempty && v.IsZero() {
			continue
		}
		if f.nonempty && v.Len() == 0 {
			return fmt.Errorf("field %s must not be empty", f.name)
		}
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				continue
			}
			v = v.Elem()
		}
		if f.min != nil {
			n := 0.0
			if f.kind == kindInteger {
				n = float64(v.Int())
			} else {
				n = v.Float()
			}
			if n < *f.min {
				return fmt.Errorf("field %s must be at least %s, got %s", f.name,
					strconv.FormatFloat(*f.min, 'g', -1, 64), strconv.FormatFloat(n, 'g', -1, 64))
			}
		}
		if f.enum != nil && !slices.Contains(f.enum, v.String()) {
			return fmt.Errorf("field %s must be one of %s, got %q%s", f.name, strings.Join(f.enum, ", "),
				clip(v.String(), 64), didYouMean(v.String(), f.enum))
		}
	}
	return nil
}

// checkID checks a message id: non-empty, at most MaxIDLength characters.
func checkID(id string) error {
	if id == "" {
		return errors.New("id must not be empty")
	}
	if n := utf8.RuneCountInString(id); n > MaxIDLength {
		return fmt.Errorf("id is %d characters long, more than %d", n, MaxIDLength)
	}
	return nil
}

// didYouMean returns ` (did you mean "x"?)` for the candidate closest to s,
// if one is close enough to be a typo, else "". Typos in message types and
// field names are the most likely mistake of someone writing an agent by hand.
func didYouMean(s string, candidates []string) string {
	if s == "" || len(s) > 64 {
		return "" // nothing to compare, or not worth O(n*m) on a huge name
	}
	best, bestDist := "", 3 // accept at most two edits
	for _, c := range candidates {
		if strings.EqualFold(s, c) {
			return fmt.Sprintf(" (did you mean %q?)", c)
		}
		if d := editdist.Distance(s, c, bestDist-1); d < bestDist && d*3 <= len(c) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
