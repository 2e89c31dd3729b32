package spec

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/orch-cli/orch/schemas"
)

// TestSchemasValidAgainstDraft: the bundled schemas compile, which checks
// them against the draft 2020-12 metaschema first.
func TestSchemasValidAgainstDraft(t *testing.T) {
	for _, kind := range []Kind{KindAgent, KindCuelist, KindMessage} {
		var ks kindSchema
		if ks.compile(kind); ks.err != nil {
			t.Errorf("%s schema: %v", kind, ks.err)
		}
	}
}

// notAsserting are the keywords of draft 2020-12 that never fail on their
// own: they hold other schemas (whose keywords fail), name or describe.
var notAsserting = map[string]bool{
	"$schema": true, "$id": true, "$ref": true, "$defs": true, "$comment": true, "$anchor": true,
	"title": true, "description": true, "default": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true,
	"properties": true, "patternProperties": true, "items": true, "prefixItems": true,
	"propertyNames": true, "allOf": true, "anyOf": true, "oneOf": true, "not": true,
	"if": true, "then": true, "else": true, "dependentSchemas": true,
	// additionalProperties fails on its own, and explain names the unknown fields.
	"additionalProperties": true,
}

// TestEveryKeywordExplained: every keyword the bundled schemas use that can
// fail is one keywordText has words for, so no diagnostic of orch's falls
// back to naming a keyword.
func TestEveryKeywordExplained(t *testing.T) {
	used := map[string]bool{}
	var walk func(schema any)
	walk = func(schema any) {
		m, ok := schema.(map[string]any)
		if !ok {
			return
		}
		for k, v := range m {
			used[k] = true
			switch k {
			case "properties", "patternProperties", "$defs", "dependentSchemas":
				sub, _ := v.(map[string]any)
				for _, s := range sub {
					walk(s)
				}
			case "allOf", "anyOf", "oneOf", "prefixItems":
				for _, s := range asList(v) {
					walk(s)
				}
			case "items", "additionalProperties", "propertyNames", "not", "if", "then", "else", "contains":
				walk(v)
			}
		}
	}
	for _, kind := range schemas.Kinds {
		b, err := schemas.Bundle(kind)
		if err != nil {
			t.Fatal(err)
		}
		var raw any
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		walk(raw)
	}
	var missing []string
	for k := range used {
		if !notAsserting[k] && strings.HasPrefix(keywordText(k, map[string]any{}, nil), unexplained) {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("keywords of the bundled schemas that keywordText has no words for: %v", missing)
	}
	if len(used) < 15 {
		t.Errorf("only %d keywords found: the walk missed the schemas", len(used))
	}
}

// keywordText words a failure from the keyword's value in the schema and the
// document's value alone.
func TestKeywordText(t *testing.T) {
	for _, tc := range []struct {
		keyword string
		schema  string
		value   any
		want    string
	}{
		{"type", `{"type": ["string", "array"]}`, int64(3), "expected string or array, but got integer"},
		{"maxLength", `{"maxLength": 3}`, "héllo", "length must be <= 3, but got 5"},
		{"minItems", `{"minItems": 2}`, []any{"a"}, "minimum 2 items required, but found 1 items"},
		{"pattern", `{"pattern": "^[a-z']+$"}`, "X", `does not match pattern '^[a-z\']+$'`},
		{"uniqueItems", `{"uniqueItems": true}`, []any{"a", int64(1), "b", 1.0}, "items at index 1 and 3 are equal"},
		{"format", `{"format": "email"}`, "x", "x is not valid 'email'"},
		{"required", `{"required": ["a", "b", "c"]}`, map[string]any{"b": 1}, "missing properties: 'a', 'c'"},
		{"maximum", `{"maximum": 1}`, 2.5, "must be <= 1 but found 2.5"},
		{"contains", `{"contains": {}}`, []any{}, unexplained + "contains"},
	} {
		var schema map[string]any
		if err := json.Unmarshal([]byte(tc.schema), &schema); err != nil {
			t.Fatal(err)
		}
		if got := keywordText(tc.keyword, schema, tc.value); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.keyword, got, tc.want)
		}
	}
}

// A message is validated against the message schema narrowed to its type:
// every message type (and an unknown one), with fields missing, unknown and
// of the wrong type, fails the narrowed schema exactly where it fails the
// whole one.
func TestNarrowedMessageSchemaFailsAlike(t *testing.T) {
	var full kindSchema
	if full.compile(KindMessage); full.err != nil {
		t.Fatal(full.err)
	}
	leavesOf := func(ks *kindSchema, v any) []string {
		err := validateOne(ks.schema, v, "")
		if err == nil {
			return nil
		}
		var out []string
		for _, l := range leaves(err.(*jsonschema.ValidationError), nil) {
			_, frag, _ := strings.Cut(l.AbsoluteKeywordLocation, "#")
			out = append(out, l.InstanceLocation+" "+frag)
		}
		sort.Strings(out)
		return out
	}
	doc, err := bundles[KindMessage]()
	if err != nil {
		t.Fatal(err)
	}
	types := append(sortedKeys(messageTypes()), "no.such.type")
	if len(types) < 40 {
		t.Fatalf("only %d message types found", len(types))
	}
	defs := doc["$defs"].(map[string]any)
	for _, mt := range types {
		bad := map[string]any{"message_type": mt, "not_a_field": true}
		def, _ := defs[mt].(map[string]any)
		for name := range propertyNames(def) {
			if name != "message_type" {
				bad[name] = int64(12345)
			}
		}
		var narrow kindSchema
		if narrow.compileMessage(mt); narrow.err != nil {
			t.Fatalf("%s: %v", mt, narrow.err)
		}
		for _, v := range []any{map[string]any{"message_type": mt}, bad} {
			want, got := leavesOf(&full, v), leavesOf(&narrow, v)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("%s %v:\nnarrowed %q\nwhole    %q", mt, v, got, want)
			}
		}
	}
}
