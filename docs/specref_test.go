package docs

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/orch-cli/orch/schemas"
)

// TestSpecReference keeps docs/reference/spec/KIND.md what the JSON Schemas
// say: every key of an agent contract, a cuelist and each protocol message,
// with its type, whether it is required, and its description.
func TestSpecReference(t *testing.T) {
	for _, kind := range schemas.Kinds {
		checkGenerated(t, filepath.Join("reference", "spec", kind+".md"), []byte(specPage(kind, bundled(t, kind))))
	}
}

// TestSpecKeysDescribed checks that every key of an agent contract, of a
// cuelist and of each protocol message has a description in its schema:
// the spec reference is generated from them, and a key without one would
// be a row that explains nothing.
func TestSpecKeysDescribed(t *testing.T) {
	for _, kind := range []string{"agent", "cuelist"} {
		w := &schemaWalker{root: bundled(t, kind)}
		w.walk(w.root, "", 0)
		for _, r := range w.rows {
			if r.desc == "" {
				t.Errorf("schemas/%s.schema.json: %s has no description (the spec reference shows it)", kind, r.path)
			}
		}
	}
	root := bundled(t, "message")
	defs, _ := root["$defs"].(map[string]any)
	types, _ := root["properties"].(map[string]any)["message_type"].(map[string]any)["enum"].([]any)
	if len(types) == 0 {
		t.Fatal("schemas/message.schema.json lists no message types")
	}
	for _, mt := range types {
		def, _ := defs[mt.(string)].(map[string]any)
		if def == nil {
			continue // no fields of its own
		}
		if d, _ := def["description"].(string); d == "" {
			t.Errorf("schemas/message.schema.json: message %s has no description", mt)
		}
		w := &schemaWalker{root: root}
		w.walk(def, "", 0)
		for _, r := range w.rows {
			if r.desc == "" {
				t.Errorf("schemas/message.schema.json: %s: %s has no description (the spec reference shows it)", mt, r.path)
			}
		}
	}
}

// bundled is the self-contained schema of kind, decoded.
func bundled(t *testing.T, kind string) map[string]any {
	t.Helper()
	raw, err := schemas.Bundle(kind)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	return root
}

// specPage renders one schema as a page: a table of keys for agents and
// cuelists, a table per message type for messages.
func specPage(kind string, root map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", map[string]string{"agent": "Agent contracts: every key", "cuelist": "Cuelists: every key", "message": "Protocol messages: every type and key"}[kind])
	fmt.Fprintf(&b, "<!-- Generated from schemas/%s.schema.json by `go test ./docs -update`: edit the schema, not this page. -->\n\n", kind)
	if d, _ := root["description"].(string); d != "" {
		fmt.Fprintf(&b, "%s\n\n", d)
	}
	fmt.Fprintf(&b, "`orch schema %s` prints the whole schema (for editors: `orch schema --dir .orch/schemas`).\n", kind)
	w := &schemaWalker{root: root}
	if kind != "message" {
		w.rows = nil
		w.walk(w.root, "", 0)
		writeRows(&b, w.rows)
		return b.String()
	}
	types, _ := root["properties"].(map[string]any)["message_type"].(map[string]any)["enum"].([]any)
	defs, _ := root["$defs"].(map[string]any)
	b.WriteString("\nEach message is one JSON object on one line. Every message has `message_type` (which of these it is), `id` (unique per sender, at most 256 characters) and, in an answer, `in_reply_to` (the `id` it answers): the tables below leave those out.\n\n")
	for _, mt := range types {
		name := mt.(string)
		fmt.Fprintf(&b, "- [`%s`](#%s)\n", name, slug(name))
	}
	for _, mt := range types {
		name := mt.(string)
		def, _ := defs[name].(map[string]any)
		fmt.Fprintf(&b, "\n## %s\n\n", name)
		if def == nil {
			b.WriteString("No fields beyond `message_type`, `id` and `in_reply_to`.\n")
			continue
		}
		if d, _ := def["description"].(string); d != "" {
			fmt.Fprintf(&b, "%s\n", d)
		}
		w.rows = nil
		w.walk(def, "", 0)
		writeRows(&b, w.rows)
	}
	return b.String()
}

func writeRows(b *strings.Builder, rows []specRow) {
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n| key | type | required | description |\n|---|---|---|---|\n")
	for _, r := range rows {
		req := ""
		if r.required {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", r.path, cell(r.typ), req, cell(r.desc))
	}
}

// cell makes text fit a table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

type specRow struct {
	path, typ, desc string
	required        bool
}

type schemaWalker struct {
	root map[string]any
	rows []specRow
}

// resolve follows $ref (inside the bundled schema) and returns the schema
// with the referring site's description winning.
func (w *schemaWalker) resolve(s map[string]any) map[string]any {
	for i := 0; i < 10; i++ {
		ref, _ := s["$ref"].(string)
		if !strings.HasPrefix(ref, "#/$defs/") {
			return s
		}
		target, _ := w.root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		if target == nil {
			return s
		}
		merged := map[string]any{}
		for k, v := range target {
			merged[k] = v
		}
		for k, v := range s {
			if k != "$ref" {
				merged[k] = v
			}
		}
		s = merged
	}
	return s
}

// walk adds a row per property of the object schema s, below path.
func (w *schemaWalker) walk(s map[string]any, path string, depth int) {
	s = w.resolve(s)
	if depth > 8 {
		return
	}
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	if list, ok := s["required"].([]any); ok {
		for _, r := range list {
			required[r.(string)] = true
		}
	}
	for _, name := range sortedKeys(props) {
		if depth == 0 && (name == "message_type" || name == "id" || name == "in_reply_to") && path == "" && props["message_type"] != nil && len(props) > 1 && w.isMessage() {
			continue // every message has them: said once, above
		}
		p := w.resolve(props[name].(map[string]any))
		key := name
		if path != "" {
			key = path + "." + name
		}
		w.rows = append(w.rows, specRow{path: key, typ: w.typeOf(p), desc: describe(p), required: required[name]})
		w.children(p, key, depth+1)
	}
	// The object form of a value that may also be a string (notify).
	for _, k := range []string{"then", "else"} {
		if sub, ok := s[k].(map[string]any); ok {
			w.walk(sub, path, depth)
		}
	}
}

func (w *schemaWalker) isMessage() bool {
	id, _ := w.root["$id"].(string)
	return strings.Contains(id, "message")
}

// children walks what is inside a property: an object's keys, a list's
// items, a map's values, the object form of an alternative.
func (w *schemaWalker) children(p map[string]any, key string, depth int) {
	if _, ok := p["properties"]; ok {
		w.walk(p, key, depth)
	}
	if items, ok := p["items"].(map[string]any); ok {
		items = w.resolve(items)
		if _, ok := items["properties"]; ok {
			w.walk(items, key+"[]", depth)
		}
	}
	if ap, ok := p["additionalProperties"].(map[string]any); ok {
		ap = w.resolve(ap)
		if _, ok := ap["properties"]; ok {
			w.walk(ap, key+".<name>", depth)
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := p[k].([]any); ok {
			for _, a := range alts {
				a := w.resolve(a.(map[string]any))
				if _, ok := a["properties"]; ok {
					w.walk(a, key, depth)
				}
			}
		}
	}
	for _, k := range []string{"then", "else"} {
		if sub, ok := p[k].(map[string]any); ok {
			if _, ok := sub["properties"]; ok {
				w.walk(sub, key, depth)
			}
		}
	}
}

// typeOf says what a value may be, in a few words.
func (w *schemaWalker) typeOf(p map[string]any) string {
	p = w.resolve(p)
	if c, ok := p["const"]; ok {
		return fmt.Sprintf("`%v`", c)
	}
	if e, ok := p["enum"].([]any); ok {
		var vals []string
		for _, v := range e {
			vals = append(vals, fmt.Sprintf("`%v`", v))
		}
		return "one of " + strings.Join(vals, ", ")
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := p[k].([]any); ok {
			var ts []string
			for _, a := range alts {
				ts = appendUnique(ts, w.typeOf(a.(map[string]any)))
			}
			return strings.Join(ts, " or ")
		}
	}
	var types []string
	switch t := p["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			types = append(types, x.(string))
		}
	}
	if len(types) == 0 {
		if _, ok := p["properties"]; ok {
			types = []string{"object"}
		}
	}
	var out []string
	for _, t := range types {
		switch t {
		case "array":
			item := "any"
			if items, ok := p["items"].(map[string]any); ok {
				item = w.typeOf(items)
			}
			out = append(out, "list of "+item)
		case "object":
			if ap, ok := p["additionalProperties"].(map[string]any); ok {
				out = append(out, "map of "+w.typeOf(ap))
			} else {
				out = append(out, "object")
			}
		default:
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return "any"
	}
	return strings.Join(out, " or ")
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// describe is a property's description, with its pattern and default when
// the schema gives them.
func describe(p map[string]any) string {
	d, _ := p["description"].(string)
	if d != "" && !strings.HasSuffix(d, ".") {
		d += "."
	}
	if pat, ok := p["pattern"].(string); ok && !strings.Contains(d, pat) {
		d = strings.TrimSpace(d + " Pattern: `" + pat + "`.")
	}
	if def, ok := p["default"]; ok {
		d = strings.TrimSpace(d + fmt.Sprintf(" Default: `%v`.", def))
	}
	return d
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
