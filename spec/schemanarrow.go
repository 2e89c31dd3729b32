package spec

import (
	"maps"
	"strings"
	"sync"

	"github.com/orch-cli/orch/schemas"
)

// The schema library checks a schema against its draft's metaschema before
// compiling it, in proportion to its size: three quarters of the 6 ms that
// compiling the agent and cuelist schemas took, which every orch run, plan
// and validate paid. A document is validated instead against its kind's
// schema narrowed to the fields it uses: every property no object of the
// document has (anywhere) is left out of properties (and dependentSchemas),
// and the $defs nothing left refers to are left out. A property's subschema
// applies only to an object that has the property, and one that is not
// listed only matters to an object that has it (additionalProperties,
// unevaluatedProperties), so the narrowed schema accepts and rejects
// exactly what the whole one does, with the same errors at the same keyword
// locations (nothing moves: errors are explained against the whole schema).
// Left out rather than made true: the library checks every entry against
// the metaschema, true ones too (a third of a narrowed compile). A $ref
// names a whole definition, never a property inside one that might be left
// out (TestRefsNameWholeDefinitions).
//
// The documents of one kind mostly use the same fields (the 200 agents of a
// generated chain have four): a narrowed schema serves every later document
// whose fields it covers, and a new field makes one for all the fields seen
// so far (the files a cuelist includes are read ahead for theirs, see
// hintFields), until the narrowed schemas compiled would add up to three
// quarters of the whole one: then the whole schema is compiled and used.

// narrowing is the narrowed schemas of one kind.
type narrowing struct {
	kind      Kind
	doc       func() (map[string]any, error) // the bundled schema, decoded once
	names     func() map[string]bool         // every property name in it
	wholeSize func() int                     // schemaSize of the whole schema

	mu    sync.Mutex
	built []*kindSchema // each covers its keys
	seen  map[string]bool
	spent int  // schemaSize of the narrowed schemas compiled
	whole bool // the whole schema is used from now on
}

var narrowings = map[Kind]*narrowing{
	KindAgent:   newNarrowing(KindAgent),
	KindCuelist: newNarrowing(KindCuelist),
}

func newNarrowing(kind Kind) *narrowing {
	n := &narrowing{kind: kind, doc: bundles[kind], seen: map[string]bool{}}
	n.wholeSize = sync.OnceValue(func() int {
		doc, _ := n.doc()
		return schemaSize(doc)
	})
	n.names = sync.OnceValue(func() map[string]bool {
		names := map[string]bool{}
		doc, _ := n.doc()
		walkSchema(doc, func(s map[string]any) {
			for _, kw := range []string{"properties", "dependentSchemas"} {
				for name := range asMap(s[kw]) {
					names[name] = true
				}
			}
		})
		return names
	})
	return n
}

// bundleDoc returns the bundled schema of kind, decoded once.
func bundleDoc(kind Kind) func() (map[string]any, error) {
	return sync.OnceValues(func() (map[string]any, error) {
		return schemas.BundleDoc(string(kind))
	})
}

// narrowedSchema is the compiled schema document value is validated against.
func narrowedSchema(kind Kind, value any) *kindSchema {
	n := narrowings[kind]
	if n == nil {
		return schemaFor(kind)
	}
	used := n.used(value)
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ks := range n.built {
		if covers(ks.keys, used) {
			return ks
		}
	}
	if n.whole {
		return schemaFor(kind)
	}
	maps.Copy(n.seen, used)
	doc, err := n.doc()
	if err != nil {
		return &kindSchema{err: err}
	}
	narrowed := narrowToKeys(doc, n.seen)
	size := schemaSize(narrowed)
	if n.spent+size > n.wholeSize()*3/4 {
		n.whole = true // narrowing would now cost more than it saves
		return schemaFor(kind)
	}
	n.spent += size
	ks := &kindSchema{keys: maps.Clone(n.seen)}
	ks.compileDoc(kind, narrowed, doc) // errors are explained against the whole schema (same locations)
	n.built = append(n.built, ks)
	return ks
}

// schemaSize is about how much work compiling a schema document is: the
// schema objects in it (the metaschema check and the compiler visit each).
func schemaSize(doc map[string]any) int {
	n := 0
	walkSchema(doc, func(map[string]any) { n++ })
	return n
}

// used is the property names of the kind's schema that value uses as a key
// anywhere.
func (n *narrowing) used(value any) map[string]bool {
	names := n.names()
	used := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if names[k] {
					used[k] = true
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(value)
	return used
}

func covers(keys, used map[string]bool) bool {
	for k := range used {
		if !keys[k] {
			return false
		}
	}
	return true
}

// narrowToKeys returns a copy of the schema doc without the properties not
// in keys, nor the $defs nothing then refers to.
func narrowToKeys(doc map[string]any, keys map[string]bool) map[string]any {
	return keepReferencedDefs(narrowNode(doc, keys).(map[string]any))
}

// Where a schema keyword holds subschemas: one, a list, or a map of them.
var (
	oneSubschema = []string{"additionalProperties", "items", "contains", "not", "if", "then", "else",
		"propertyNames", "unevaluatedProperties", "unevaluatedItems", "contentSchema"}
	listOfSubschemas = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	mapOfSubschemas  = []string{"properties", "patternProperties", "dependentSchemas", "$defs"}
)

// narrowNode narrows one schema (a map; true and false stay as they are),
// copying what it changes.
func narrowNode(node any, keys map[string]bool) any {
	s, ok := node.(map[string]any)
	if !ok {
		return node
	}
	out := make(map[string]any, len(s))
	for k, v := range s {
		out[k] = v
	}
	for _, kw := range oneSubschema {
		if v, ok := s[kw]; ok {
			out[kw] = narrowNode(v, keys)
		}
	}
	for _, kw := range listOfSubschemas {
		if list, ok := s[kw].([]any); ok {
			l := make([]any, len(list))
			for i, v := range list {
				l[i] = narrowNode(v, keys)
			}
			out[kw] = l
		}
	}
	for _, kw := range mapOfSubschemas {
		m, ok := s[kw].(map[string]any)
		if !ok {
			continue
		}
		nm := make(map[string]any, len(m))
		for name, v := range m {
			if (kw == "properties" || kw == "dependentSchemas") && !keys[name] {
				continue // no object of the document has it: never applied
			}
			nm[name] = narrowNode(v, keys)
		}
		out[kw] = nm
	}
	return out
}

// keepReferencedDefs leaves out of the schema out (a copy) the $defs that
// nothing else in it refers to, directly or through other $defs.
func keepReferencedDefs(out map[string]any) map[string]any {
	defs := asMap(out["$defs"])
	delete(out, "$defs")
	kept := map[string]any{}
	var keep func(v any)
	keep = func(v any) {
		eachRef(v, func(ref string) {
			name, ok := strings.CutPrefix(ref, "#/$defs/")
			if !ok {
				return
			}
			name, _, _ = strings.Cut(name, "/")
			name = unescapePointer(name)
			if def, ok := defs[name]; ok && kept[name] == nil {
				kept[name] = def
				keep(def)
			}
		})
	}
	keep(out)
	if len(kept) > 0 {
		out["$defs"] = kept
	}
	return out
}

// eachRef calls f with every $ref in v.
func eachRef(v any, f func(ref string)) {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			f(ref)
		}
		for _, x := range v {
			eachRef(x, f)
		}
	case []any:
		for _, x := range v {
			eachRef(x, f)
		}
	}
}

// walkSchema calls f for every schema object in doc.
func walkSchema(node any, f func(map[string]any)) {
	s, ok := node.(map[string]any)
	if !ok {
		return
	}
	f(s)
	for _, kw := range oneSubschema {
		walkSchema(s[kw], f)
	}
	for _, kw := range listOfSubschemas {
		for _, v := range asList(s[kw]) {
			walkSchema(v, f)
		}
	}
	for _, kw := range mapOfSubschemas {
		for _, v := range asMap(s[kw]) {
			walkSchema(v, f)
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// maxHintFile caps the size of a file read ahead for its fields: a bigger
// one is a generated spec, whose documents look alike.
const maxHintFile = 256 << 10

// hintFields tells the narrowings the fields the files about to be loaded
// seem to use (fieldsIn), before the first of them is validated: one
// narrowed schema of each kind then serves a project whose agent contracts
// are in files of their own, rather than one more per new field. A guess
// off either way costs time only: each document is validated against a
// schema that covers the fields it has.
func (l *loader) hintFields(r *projectRoot, rels []string) {
	if len(rels) < 2 {
		return // one file: the narrowing sees its documents' fields itself
	}
	fields := map[string]bool{}
	for _, rel := range rels {
		if data, tooBig, err := readCapped(r.root, rel, maxHintFile); err == nil && !tooBig {
			fieldsIn(data, fields)
		}
	}
	for _, n := range narrowings {
		n.expect(fields)
	}
}

// expect adds the kind's property names among fields to those the next
// narrowed schema covers.
func (n *narrowing) expect(fields map[string]bool) {
	names := n.names()
	n.mu.Lock()
	defer n.mu.Unlock()
	for f := range fields {
		if names[f] {
			n.seen[f] = true
		}
	}
}

// fieldsIn adds to fields the words of data that look like YAML mapping
// keys: a name after a line's indentation and list dashes, or after { or
// a comma, followed by a colon.
func fieldsIn(data []byte, fields map[string]bool) {
	start := true // at a place where a key may begin
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '\n' || c == '{' || c == ',':
			start = true
		case start && (c == ' ' || c == '\t' || c == '-'):
		case start && isNameByte(c):
			j := i
			for j < len(data) && isNameByte(data[j]) {
				j++
			}
			if j < len(data) && data[j] == ':' {
				fields[string(data[i:j])] = true
			}
			i, start = j-1, false
		default:
			start = false
		}
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
