package spec

import (
	"slices"
	"testing"
)

// TestNarrowedSchemaSameDiagnostics: every spec of the testscripts and the
// examples (valid and not) gets the same diagnostics from the schema
// narrowed to its fields as from the whole schema; and the narrowed schemas
// are smaller.
func TestNarrowedSchemaSameDiagnostics(t *testing.T) {
	defer resetNarrowings()
	narrowedSome := false
	for i, seed := range fuzzSeeds(t) {
		if len(seed) > 64<<10 {
			continue
		}
		whole := schemaDiagnostics(seed, false)
		narrowed := schemaDiagnostics(seed, true)
		if !slices.Equal(whole, narrowed) {
			t.Errorf("seed %d:\n%s\nwhole schema:\n%q\nnarrowed:\n%q", i, seed, whole, narrowed)
		}
		for _, n := range narrowings {
			for _, ks := range n.built {
				if len(ks.keys) < len(n.names()) {
					narrowedSome = true
				}
			}
		}
	}
	if !narrowedSome {
		t.Error("no schema was narrowed")
	}
}

// schemaDiagnostics loads data as one file and returns its diagnostics,
// sorted, validated against schemas narrowed for it alone or whole.
func schemaDiagnostics(data []byte, narrow bool) []string {
	resetNarrowings()
	if !narrow {
		for k := range narrowings {
			narrowings[k] = nil // narrowedSchema uses the whole schema
		}
	}
	l := &loader{opts: LoadOptions{MaxFileSize: DefaultMaxFileSize}, set: &Set{}, seen: map[string]bool{}, noIncludes: true}
	l.loadData(&File{Name: "spec.yaml", Abs: "/spec.yaml"}, data)
	var out []string
	for _, d := range l.diags.Sorted() {
		out = append(out, d.String())
	}
	return out
}

func resetNarrowings() {
	for _, k := range []Kind{KindAgent, KindCuelist} {
		narrowings[k] = newNarrowing(k)
	}
}

// TestNarrowToKeys: a property the document does not use becomes true, and
// only the $defs still referred to are kept.
func TestNarrowToKeys(t *testing.T) {
	doc := map[string]any{
		"properties": map[string]any{
			"a": map[string]any{"$ref": "#/$defs/A"},
			"b": map[string]any{"$ref": "#/$defs/B"},
		},
		"$defs": map[string]any{
			"A": map[string]any{"properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/X"}}},
			"B": map[string]any{"type": "string"},
			"X": map[string]any{"type": "integer"},
		},
	}
	got := narrowToKeys(doc, map[string]bool{"a": true})
	props := got["properties"].(map[string]any)
	if props["b"] != true || props["a"] == true {
		t.Errorf("properties narrowed to %v, want a kept and b true", props)
	}
	defs := got["$defs"].(map[string]any)
	if _, ok := defs["B"]; ok || len(defs) != 1 {
		t.Errorf("$defs kept: %v, want A alone (its x is not used, so X goes too)", defs)
	}
	if _, ok := doc["$defs"].(map[string]any)["B"]; !ok {
		t.Error("the whole schema was changed")
	}
}

// TestIncludedFilesShareANarrowedSchema: the agent contracts a cuelist
// includes, each in its own file with fields of its own, are validated
// against one narrowed agent schema (their fields were read ahead), not one
// more per file.
func TestIncludedFilesShareANarrowedSchema(t *testing.T) {
	resetNarrowings()
	defer resetNarrowings()
	_, diags, err := Load([]string{"../examples/deploy/cuelist.yaml"}, LoadOptions{})
	if err != nil || diags.HasErrors() {
		t.Fatalf("loading the deploy example: %v %v", err, diags)
	}
	n := narrowings[KindAgent]
	if len(n.built) != 1 || n.whole {
		t.Errorf("%d narrowed agent schemas (whole: %v), want 1", len(n.built), n.whole)
	}
	if len(n.built) > 0 && len(n.built[0].keys) >= len(n.names()) {
		t.Errorf("the agent schema was not narrowed: %d of %d fields", len(n.built[0].keys), len(n.names()))
	}
}

func TestFieldsIn(t *testing.T) {
	fields := map[string]bool{}
	fieldsIn([]byte("agent:\n  id: a\n  command: [x, \"y: z\"]\n  env: {FOO: 1, bar_baz: 2}\n  - retry:\n      max: 2\n# note: no\n"), fields)
	for _, f := range []string{"agent", "id", "command", "env", "FOO", "bar_baz", "retry", "max"} {
		if !fields[f] {
			t.Errorf("%s not found in %v", f, fields)
		}
	}
}
