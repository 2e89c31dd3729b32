// Package schemas holds orch's JSON Schemas (draft 2020-12) for agent contracts,
// cuelists and protocol messages. The files are embedded so that validation never
// reads the disk or the network; Bundle returns a self-contained copy of one schema
// (shared definitions inlined) for editors and for `orch schema`.
package schemas

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed *.schema.json
var FS embed.FS

// Kinds are the schemas a user can ask for, in the order `orch schema` prints them.
var Kinds = []string{"agent", "cuelist", "message"}

// defsRef is how the kind schemas point into the shared definitions file.
const defsRef = "defs.schema.json#/$defs/"

// Bundle returns the schema for kind with the shared definitions copied into its
// own $defs, so the result stands alone (an editor can load it from one file).
func Bundle(kind string) ([]byte, error) {
	doc, err := BundleDoc(kind)
	if err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// BundleDoc is Bundle decoded: a new document on every call. Validation
// starts from it rather than from Bundle's text, which it would have to
// encode and decode again (about a millisecond of every orch run).
func BundleDoc(kind string) (map[string]any, error) {
	if !known(kind) {
		return nil, fmt.Errorf("unknown schema %q (want one of %s)", kind, strings.Join(Kinds, ", "))
	}
	raw, err := FS.ReadFile(kind + ".schema.json")
	if err != nil {
		return nil, err
	}
	defsRaw, err := FS.ReadFile("defs.schema.json")
	if err != nil {
		return nil, err
	}
	var doc, defs map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), defsRef, "#/$defs/")), &doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", kind, err)
	}
	if err := json.Unmarshal(defsRaw, &defs); err != nil {
		return nil, fmt.Errorf("schema defs: %w", err)
	}
	own, _ := doc["$defs"].(map[string]any)
	if own == nil {
		own = map[string]any{}
	}
	for name, def := range defs["$defs"].(map[string]any) {
		if _, clash := own[name]; clash {
			return nil, fmt.Errorf("schema %s: definition %q is also a shared definition", kind, name)
		}
		own[name] = def
	}
	doc["$defs"] = own
	return doc, nil
}

// URL is the absolute URI a bundled schema is registered under.
func URL(kind string) string { return "https://orch.dev/schemas/" + kind + ".schema.json" }

func known(kind string) bool {
	for _, k := range Kinds {
		if k == kind {
			return true
		}
	}
	return false
}
