package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"gopkg.in/yaml.v3"

	"github.com/orch-cli/orch/schemas"
)

// kindSchema is one kind's compiled schema, built on first use: a process
// that sees no protocol message never pays for the message schema.
type kindSchema struct {
	once   sync.Once
	schema *jsonschema.Schema
	cue    *jsonschema.Schema // cuelist only: one cue, to validate big cuelists in parallel
	raw    any                // the bundled schema document, to explain errors
	err    error
	keys   map[string]bool // narrowed (schemanarrow.go): the property names it checks; nil: all
}

var kindSchemas = map[Kind]*kindSchema{KindAgent: {}, KindCuelist: {}, KindMessage: {}}

func schemaFor(kind Kind) *kindSchema {
	ks := kindSchemas[kind]
	ks.once.Do(func() { ks.compile(kind) })
	return ks
}

// compile builds the whole schema from the embedded files.
func (ks *kindSchema) compile(kind Kind) {
	doc, err := bundles[kind]()
	if err != nil {
		ks.err = err
		return
	}
	ks.compileDoc(kind, doc, doc)
}

// bundles are the bundled schemas, each decoded once.
var bundles = map[Kind]func() (map[string]any, error){
	KindAgent:   bundleDoc(KindAgent),
	KindCuelist: bundleDoc(KindCuelist),
	KindMessage: bundleDoc(KindMessage),
}

// compileDoc builds the schema from doc, a whole bundled schema or one
// narrowed from it, and keeps raw (the whole one) to explain errors; LoadURL
// refuses anything else, so compiling never touches the disk or the network.
func (ks *kindSchema) compileDoc(kind Kind, doc, raw map[string]any) {
	ks.raw = raw
	b, err := json.Marshal(doc)
	if err != nil {
		ks.err = err
		return
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.Formats["duration"] = isDuration
	c.Formats["size"] = isSize
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("orch does not load schemas from %s: all schemas are embedded", url)
	}
	url := schemas.URL(string(kind))
	if err := c.AddResource(url, bytes.NewReader(b)); err != nil {
		ks.err = err
		return
	}
	if ks.schema, ks.err = c.Compile(url); ks.err != nil {
		return
	}
	if _, ok := asMap(doc["$defs"])["cue"]; ok && kind == KindCuelist { // a narrowed schema may have none
		ks.cue, ks.err = c.Compile(url + "#/$defs/cue")
	}
}

// isDuration is the "duration" format: a non-negative Go duration.
func isDuration(v any) bool {
	s, ok := v.(string)
	if !ok {
		return true // the type keyword reports non-strings
	}
	d, err := time.ParseDuration(s)
	return err == nil && d >= 0
}

// isSize is the "size" format: see ParseSize.
func isSize(v any) bool {
	s, ok := v.(string)
	if !ok {
		return true
	}
	_, err := ParseSize(s)
	return err == nil
}

// validateSchema checks a document against its kind's schema and turns every
// leaf error into a diagnostic at the exact key or value it is about.
func validateSchema(doc *Document, poisoned map[string]bool, diags *Diagnostics) {
	ks := schemaOf(doc)
	if ks.err != nil {
		diags.Add(Error, doc.Pos(""), "", "internal", "compiling the embedded %s schema: %v", doc.Kind, ks.err)
		return
	}
	var errs []error
	if cues, ok := bigCuelist(doc); ok && ks.cue != nil {
		errs = validateCuelistParallel(ks, doc, cues)
	} else if err := validateOne(ks.schema, doc.value, ""); err != nil {
		errs = []error{err}
	}
	for _, err := range errs {
		e, ok := err.(*jsonschema.ValidationError)
		if !ok { // not about the document: the schema's own loop, a Go type
			diags.Add(Error, doc.Pos(""), "", "schema", "%v", err)
			continue
		}
		for _, leaf := range leaves(e, nil) {
			leaf.InstanceLocation = plainPointer(leaf.InstanceLocation)
			if underPoisoned(leaf.InstanceLocation, poisoned) {
				continue
			}
			explain(doc, ks, leaf, diags)
		}
	}
}

// validateOne validates v and returns its error: a *ValidationError tree,
// with every instance location prefixed by prefix (v's place in its
// document), or an error that is not about v's contents.
func validateOne(s *jsonschema.Schema, v any, prefix string) error {
	err := s.Validate(v)
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err
	}
	if prefix != "" {
		var walk func(*jsonschema.ValidationError)
		walk = func(e *jsonschema.ValidationError) {
			e.InstanceLocation = prefix + e.InstanceLocation
			for _, c := range e.Causes {
				walk(c)
			}
		}
		walk(ve)
	}
	return ve
}

// parallelCues is the size above which a cuelist's cues are validated in
// parallel, each against the cue schema, instead of in one pass.
const parallelCues = 256

func bigCuelist(doc *Document) ([]any, bool) {
	if doc.Kind != KindCuelist {
		return nil, false
	}
	top, _ := doc.value.(map[string]any)
	cl, _ := top["cuelist"].(map[string]any)
	cues, ok := cl["cues"].([]any)
	return cues, ok && len(cues) > parallelCues
}

// validateCuelistParallel validates the cuelist with only its first cue, then
// the other cues on every core. The errors are the same as one pass's.
func validateCuelistParallel(ks *kindSchema, doc *Document, cues []any) []error {
	top := doc.value.(map[string]any)
	head := make(map[string]any, len(top))
	for k, v := range top {
		head[k] = v
	}
	clHead := make(map[string]any)
	for k, v := range top["cuelist"].(map[string]any) {
		clHead[k] = v
	}
	clHead["cues"] = cues[:1]
	head["cuelist"] = clHead
	var errs []error
	if err := validateOne(ks.schema, head, ""); err != nil {
		errs = append(errs, err)
	}

	workers := min(runtime.GOMAXPROCS(0), 8)
	results := make([][]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1 + w; i < len(cues); i += workers {
				if err := validateOne(ks.cue, cues[i], Pointer("cuelist", "cues", i)); err != nil {
					results[w] = append(results[w], err)
				}
			}
		}()
	}
	wg.Wait()
	for _, r := range results {
		errs = append(errs, r...)
	}
	return errs
}

// plainPointer undoes the URL escaping the schema library adds to pointer tokens.
func plainPointer(ptr string) string {
	if !strings.Contains(ptr, "%") {
		return ptr
	}
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		if u, err := url.PathUnescape(t); err == nil {
			toks[i] = u
		}
	}
	return strings.Join(toks, "/")
}

func leaves(ve *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return append(out, ve)
	}
	for _, c := range ve.Causes {
		out = leaves(c, out)
	}
	return out
}

func underPoisoned(ptr string, poisoned map[string]bool) bool {
	for p := ptr; ; {
		if poisoned[p] {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// explain writes the diagnostic for one schema error, in the user's terms:
// from where it is (the instance location), which keyword failed (the
// keyword location) and the values involved (the keyword's in the schema,
// the document's), never from the library's message.
func explain(doc *Document, ks *kindSchema, e *jsonschema.ValidationError, diags *Diagnostics) {
	ptr := e.InstanceLocation
	keyword, schemaAt := splitKeyword(ks.raw, e.AbsoluteKeywordLocation)
	field := fieldName(doc.value, ptr)
	value := valueAt(doc.value, ptr)
	at := doc.Pos(ptr)
	if strings.Contains(e.KeywordLocation, "/propertyNames") {
		// A key that is not a valid name: point at the key itself.
		key := lastToken(ptr)
		diags.Add(Error, doc.KeyPos(ptr), ptr, "invalid-key", "invalid key %q: %s", key, describe(schemaAt, keywordText(keyword, schemaAt, key)))
		return
	}
	switch keyword {
	case "additionalProperties":
		obj, _ := value.(map[string]any)
		known := propertyNames(schemaAt)
		for _, name := range sortedKeys(obj) {
			if _, ok := known[name]; ok {
				continue
			}
			kptr := ptr + "/" + escapePointer(name)
			msg := fmt.Sprintf("unknown field %q", name)
			if field != "" {
				msg += " in " + field
			}
			if s := closest(name, keysOf(known)); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			diags.Add(Error, doc.KeyPos(kptr), kptr, "unknown-field", "%s", msg)
		}
	case "required":
		obj, _ := value.(map[string]any)
		req, _ := schemaAt["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := obj[name]; !ok {
				where := ""
				if field != "" {
					where = " in " + field
				}
				diags.Add(Error, doc.KeyPos(ptr), ptr, "missing-field", "missing required field %q%s", name, where)
			}
		}
	case "type":
		want := strings.Join(schemaTypes(schemaAt), " or ")
		hint := ""
		if strings.Contains(want, "string") {
			// YAML reads true, 8080 or null as non-strings: say how to keep them text.
			if n, _ := doc.lookup(ptr); n != nil && n.Kind == yaml.ScalarNode && n.Style == 0 && n.Value != "" {
				hint = fmt.Sprintf(" (quote it: \"%s\")", n.Value)
			}
		}
		diags.Add(Error, at, ptr, "wrong-type", "%s must be %s, not %s%s", nameOr(field, "document"), article(want), article(jsonType(value)), hint)
	case "enum", "const":
		opts, _ := schemaAt["enum"].([]any)
		if keyword == "const" {
			opts = []any{schemaAt["const"]}
		}
		var names []string
		for _, o := range opts {
			names = append(names, fmt.Sprint(o))
		}
		msg := fmt.Sprintf("%s must be one of %s, not %s", nameOr(field, "value"), quoteList(names), show(value))
		suggestion := ""
		if s, ok := value.(string); ok {
			if c := closest(s, names); c != "" {
				suggestion = fmt.Sprintf(" (did you mean %q?)", c)
			}
		}
		if len(names) > 8 {
			msg = fmt.Sprintf("%s %s is not one of the %d known values", nameOr(field, "value"), show(value), len(names))
			if suggestion == "" {
				suggestion = fmt.Sprintf(" (orch schema %s lists them)", doc.Kind)
			}
		}
		msg += suggestion
		diags.Add(Error, at, ptr, "bad-value", "%s", msg)
	case "format":
		if schemaAt["format"] == "duration" {
			diags.Add(Error, at, ptr, "bad-duration", "%s: %s is not a duration (use Go syntax such as 500ms, 30s, 10m, 1h30m)", nameOr(field, "value"), show(value))
			return
		}
		if schemaAt["format"] == "size" {
			diags.Add(Error, at, ptr, "bad-size", "%s: %s is not a size (use a number with B, KiB, MiB or GiB, such as 512KiB or 10MiB)", nameOr(field, "value"), show(value))
			return
		}
		diags.Add(Error, at, ptr, "bad-value", "%s: %s", nameOr(field, "value"), keywordText(keyword, schemaAt, value))
	case "pattern":
		diags.Add(Error, at, ptr, "bad-value", "%s: %s is not valid: %s", nameOr(field, "value"), show(value), describe(schemaAt, keywordText(keyword, schemaAt, value)))
	case "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum":
		bound := schemaAt[keyword]
		rel := map[string]string{"minimum": "at least", "exclusiveMinimum": "above", "maximum": "at most", "exclusiveMaximum": "below"}[keyword]
		diags.Add(Error, at, ptr, "bad-value", "%s must be %s %v, not %s", nameOr(field, "value"), rel, bound, show(value))
	case "minItems", "minLength", "minProperties":
		what := map[string]string{"minItems": "item", "minLength": "character", "minProperties": "entry"}[keyword]
		n, _ := schemaAt[keyword].(float64)
		diags.Add(Error, at, ptr, "bad-value", "%s needs at least %s", nameOr(field, "value"), plural(int(n), what))
	default:
		diags.Add(Error, at, ptr, "schema", "%s: %s", nameOr(field, "value"), keywordText(keyword, schemaAt, value))
	}
}

// splitKeyword returns the failing keyword and the schema object holding it.
func splitKeyword(raw any, abs string) (string, map[string]any) {
	_, frag, _ := strings.Cut(abs, "#")
	toks := strings.Split(strings.TrimPrefix(frag, "/"), "/")
	keyword := toks[len(toks)-1]
	node := raw
	for _, t := range toks[:len(toks)-1] {
		t = unescapePointer(t)
		switch n := node.(type) {
		case map[string]any:
			node = n[t]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(n) {
				return keyword, nil
			}
			node = n[i]
		default:
			return keyword, nil
		}
	}
	m, _ := node.(map[string]any)
	return keyword, m
}

func propertyNames(schema map[string]any) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	return props
}

// describe prefers the schema's own description of a value over the library's wording.
func describe(schema map[string]any, fallback string) string {
	if d, ok := schema["description"].(string); ok && d != "" {
		return strings.TrimSuffix(d, ".")
	}
	return fallback
}

// fieldName names the value at ptr for a message: "timeout", "dependencies[2]",
// "cue CUE-100" (a cue by its id when it has one).
func fieldName(root any, ptr string) string {
	if ptr == "" {
		return ""
	}
	toks := strings.Split(ptr[1:], "/")
	last := unescapePointer(toks[len(toks)-1])
	if _, err := strconv.Atoi(last); err == nil && len(toks) > 1 {
		parent := unescapePointer(toks[len(toks)-2])
		if parent == "cues" {
			if cue, ok := valueAt(root, ptr).(map[string]any); ok {
				if id, ok := cue["id"].(string); ok && id != "" {
					return "cue " + id
				}
			}
			return "cue #" + last
		}
		return parent + "[" + last + "]"
	}
	return last
}

func lastToken(ptr string) string {
	i := strings.LastIndexByte(ptr, '/')
	return unescapePointer(ptr[i+1:])
}

func valueAt(v any, ptr string) any {
	if ptr == "" {
		return v
	}
	for _, t := range strings.Split(ptr[1:], "/") {
		switch n := v.(type) {
		case map[string]any:
			v = n[unescapePointer(t)]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			v = n[i]
		default:
			return nil
		}
	}
	return v
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int64:
		return "integer"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func article(t string) string {
	if strings.Contains(t, " or ") {
		return t
	}
	switch t {
	case "array", "object", "integer":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

func nameOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func show(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) > 60 {
		return jsonType(v)
	}
	return string(b)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func keysOf(m map[string]any) []string { return sortedKeys(m) }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
