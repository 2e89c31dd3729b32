package spec

import (
	"sync"
)

// The message schema describes some fifty message types, one allOf branch
// each ("if message_type is X then #/$defs/X"). The schema library checks a
// schema against its draft's metaschema before compiling it, in proportion
// to its size: the whole message schema cost about 40 ms, for a spec file
// that holds one handoff message. A message document is validated instead
// against the schema narrowed to its own message_type, compiled once per
// type: the other branches become true (their if could not match, so they
// could not fail; their indices, and so every error's keyword location,
// stay), and the $defs nothing left refers to are left out.

var messageSchemas sync.Map // message_type -> *kindSchema

// schemaOf is the compiled schema a document is validated against.
func schemaOf(doc *Document) *kindSchema {
	if doc.Kind != KindMessage {
		return narrowedSchema(doc.Kind, doc.value)
	}
	top, _ := doc.value.(map[string]any)
	mt, _ := top["message_type"].(string)
	if !messageTypes()[mt] {
		mt = "" // no branch applies: one schema for every unknown type
	}
	v, _ := messageSchemas.LoadOrStore(mt, &kindSchema{})
	ks := v.(*kindSchema)
	ks.once.Do(func() { ks.compileMessage(mt) })
	return ks
}

// messageTypes are the types the message schema has a branch for.
var messageTypes = sync.OnceValue(func() map[string]bool {
	types := map[string]bool{}
	doc, _ := bundles[KindMessage]()
	for _, b := range asList(doc["allOf"]) {
		if t, ok := branchType(b); ok {
			types[t] = true
		}
	}
	return types
})

func (ks *kindSchema) compileMessage(messageType string) {
	doc, err := bundles[KindMessage]()
	if err != nil {
		ks.err = err
		return
	}
	narrowed := narrowMessage(doc, messageType)
	ks.compileDoc(KindMessage, narrowed, narrowed)
}

// narrowMessage returns the message schema doc for messageType alone (see
// above). A branch that is not of the "if message_type is X" form is kept.
func narrowMessage(doc map[string]any, messageType string) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	var branches []any
	for _, b := range asList(doc["allOf"]) {
		if t, ok := branchType(b); ok && t != messageType {
			b = true
		}
		branches = append(branches, b)
	}
	if branches != nil {
		out["allOf"] = branches
	}
	return keepReferencedDefs(out)
}

// branchType is X when branch is {"if": {"properties": {"message_type":
// {"const": X}}, "required": [...]}, "then": ...}.
func branchType(branch any) (string, bool) {
	b, _ := branch.(map[string]any)
	cond, _ := b["if"].(map[string]any)
	props, _ := cond["properties"].(map[string]any)
	mt, _ := props["message_type"].(map[string]any)
	t, ok := mt["const"].(string)
	if !ok || len(b) != 2 || b["then"] == nil || len(props) != 1 || len(mt) != 1 {
		return "", false
	}
	for k := range cond {
		if k != "properties" && k != "required" {
			return "", false
		}
	}
	return t, true
}
