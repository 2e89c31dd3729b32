package spec

import (
	"slices"
	"strings"
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

// TestNarrowToKeys: a property the document does not use is left out (the
// schema library checks every entry left against its metaschema, so true
// would still cost), and only the $defs still referred to are kept.
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
	if _, ok := props["b"]; ok || props["a"] == nil || len(props) != 1 {
		t.Errorf("properties narrowed to %v, want a alone", props)
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

// TestRefsNameWholeDefinitions: narrowing leaves out the properties a
// document does not use, inside $defs too, so a $ref into a definition
// (#/$defs/a/properties/b) could name one left out; the schemas refer to
// whole definitions only.
func TestRefsNameWholeDefinitions(t *testing.T) {
	for _, kind := range []Kind{KindAgent, KindCuelist} {
		doc, err := bundles[kind]()
		if err != nil {
			t.Fatal(err)
		}
		refs := 0
		eachRef(doc, func(ref string) {
			refs++
			name, ok := strings.CutPrefix(ref, "#/$defs/")
			if !ok || strings.Contains(name, "/") {
				t.Errorf("%s schema: $ref %q does not name a whole definition", kind, ref)
			}
		})
		if refs == 0 {
			t.Errorf("%s schema: no $ref found", kind)
		}
	}
}
