// Package spec loads orch's YAML documents (agent contracts, cuelists, handoff
// specs and other protocol messages) with exact source positions, validates them
// against the embedded JSON Schemas, checks them against each other, and reports
// every problem as a Diagnostic at its file, line and column.
package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultMaxFileSize bounds how much of one spec file is read. Real specs are
// kilobytes; a 10,000-cue cuelist is about a megabyte.
const DefaultMaxFileSize = 8 << 20

// bytesPerNode sets how many YAML nodes one load may hold: one per
// bytesPerNode bytes of the size limit (8 MiB: 524,288, some 100 MiB of
// parsed YAML), for all its files together. A 10,000-cue cuelist has about
// 60,000; a file of "[1,1,1,...]" would have four million.
const bytesPerNode = 32

// LoadOptions tune Load.
type LoadOptions struct {
	MaxFileSize int64 // bytes per file; 0 means DefaultMaxFileSize
	// Root is the project directory every file loaded must be inside,
	// includes and the links they go through too. "" means each argument's
	// own directory: a file's, a directory itself, a glob's fixed part.
	Root string
}

// Set is everything loaded: the files and their decoded documents, in load order.
type Set struct {
	Files    []*File
	Agents   []*Agent
	Cuelists []*Cuelist
	Handoffs []*Handoff
	Messages []*Document // protocol messages other than handoff specs (validated only)

	// incomplete is set when a file or a document could not be read or
	// decoded (an error says so): a reference to an agent that is not
	// defined may be to one of its agents, and is not reported again.
	incomplete bool

	byName map[string]*File
}

// Agent returns the first agent with the given id, or nil.
func (s *Set) Agent(id string) *Agent {
	for _, a := range s.Agents {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// AgentIndex maps agent ids to their first definition.
func (s *Set) AgentIndex() map[string]*Agent {
	m := make(map[string]*Agent, len(s.Agents))
	for _, a := range s.Agents {
		if _, dup := m[a.ID]; !dup && a.ID != "" {
			m[a.ID] = a
		}
	}
	return m
}

// ReleaseSources drops the YAML node trees and file contents, for a caller
// that will report nothing more at a spec position (orch run, once the plan is
// built): they are the biggest part of a loaded set (a 10k-cue cuelist's nodes
// are ~16 MB) and a long run would otherwise hold them to the end. Positions
// asked for afterwards fall back to line 1, column 1 of the file.
func (s *Set) ReleaseSources() {
	for _, f := range s.Files {
		f.Data, f.lineStarts = nil, nil
		for _, doc := range f.Docs {
			doc.Root, doc.keyIndex = nil, nil
		}
	}
}

// File returns the loaded file with the given display name, or nil.
func (s *Set) File(name string) *File {
	if s.byName == nil {
		s.byName = make(map[string]*File, len(s.Files))
		for _, f := range s.Files {
			s.byName[f.Name] = f
		}
	}
	return s.byName[name]
}

// SourceLine returns a line of a loaded file, for showing a diagnostic.
func (s *Set) SourceLine(file string, line int) string { return s.File(file).Line(line) }

// PathError is a path on the command line that cannot be read at all: a usage
// error, not a problem in a spec.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *PathError) Unwrap() error { return e.Err }

// Load reads the files, directories (every *.yaml and *.yml below, hidden
// directories skipped) and globs given, with the files their cuelists include.
// A file reached twice is loaded once. Problems in the specs are diagnostics;
// an argument that names nothing readable is a *PathError.
func Load(paths []string, opts LoadOptions) (*Set, Diagnostics, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	// Nearly every load needs the agent and the cuelist schemas: they are
	// decoded (once per process) beside the reading and parsing of the
	// files, each on its own goroutine; each is compiled narrowed to the
	// fields the documents use (schemanarrow.go) when the first asks.
	go narrowings[KindAgent].names()
	go narrowings[KindCuelist].names()
	l := &loader{opts: opts, set: &Set{}, seen: map[string]bool{}}
	defer l.closeRoots()
	for _, p := range paths {
		if err := l.loadArg(p); err != nil {
			return nil, nil, err
		}
	}
	l.set.incomplete = lostDocuments(l.diags)
	return l.set, l.diags, nil
}

// lostDocuments reports whether a loading error left documents unread.
func lostDocuments(diags Diagnostics) bool {
	for _, d := range diags {
		switch d.Code {
		case "yaml-syntax", "file-too-large", "control-character", "invalid-utf8", "too-deep", "too-many-nodes", "alias-bomb",
			"unreadable-file", "unknown-kind", "two-kinds": // a failed include is its cuelist's (includeFailed)
			if d.Severity == Error {
				return true
			}
		}
	}
	return false
}

// loadArg loads what one argument names: a file, a directory or a glob.
func (l *loader) loadArg(p string) error {
	info, err := os.Stat(p)
	if err != nil && !strings.ContainsAny(p, "*?[") {
		return &PathError{Path: p, Err: errors.Unwrap(err)}
	}
	base := p // the fixed part of the argument: its root unless Root is set
	switch {
	case err != nil:
		base = globBase(p)
	case !info.IsDir():
		base = filepath.Dir(p)
	}
	r, rel, err := l.rootFor(p, base)
	if err != nil {
		return &PathError{Path: p, Err: err}
	}
	if info != nil && !info.IsDir() {
		if err := l.loadFile(r, rel, p); err != nil {
			return &PathError{Path: p, Err: err}
		}
		return nil
	}
	matches := []string{rel}
	if info == nil {
		if matches, err = globIn(r.root, rel); err != nil {
			return &PathError{Path: p, Err: fmt.Errorf("bad glob pattern: %w", err)}
		}
		if len(matches) == 0 {
			return &PathError{Path: p, Err: errors.New("pattern matches no file")}
		}
	}
	baseRel, _ := r.rel(base)
	for _, m := range matches {
		files := []string{m}
		if fi, err := r.root.Stat(m); err == nil && fi.IsDir() {
			if files, err = walkIn(r.root, m); err != nil {
				return &PathError{Path: p, Err: err}
			}
			if len(files) == 0 && info != nil {
				return &PathError{Path: p, Err: errors.New("no *.yaml or *.yml files in this directory")}
			}
		}
		l.hintFields(r, files)
		for _, f := range files {
			name := filepath.Join(base, relTo(baseRel, f))
			if err := l.loadFile(r, f, name); err != nil {
				l.diags.Add(Error, Pos{File: filepath.Clean(name)}, "", "unreadable-file", "cannot read %s: %v", filepath.Clean(name), l.why(r, err))
			}
		}
	}
	return nil
}

// rootFor opens the project root of an argument and returns the argument's
// path relative to it.
func (l *loader) rootFor(p, base string) (*projectRoot, string, error) {
	dir := l.opts.Root
	if dir == "" {
		dir = base
	}
	r, err := l.openRoot(dir)
	if err != nil {
		return nil, "", err
	}
	rel, err := r.rel(p)
	if err != nil {
		return nil, "", l.why(r, err)
	}
	return r, rel, nil
}

// why turns errOutside into a sentence naming the root.
func (l *loader) why(r *projectRoot, err error) error {
	if errors.Is(err, errOutside) {
		return fmt.Errorf("it leads outside the project root %s", r.dir)
	}
	return err
}

// globBase returns the directories of a glob before its first wildcard.
func globBase(pattern string) string {
	dir := filepath.Dir(pattern)
	for hasMeta(dir) {
		dir = filepath.Dir(dir)
	}
	return dir
}

// relTo returns target relative to dir (both relative to one root).
func relTo(dir, target string) string {
	if rel, err := filepath.Rel(dir, target); err == nil {
		return rel
	}
	return target
}

type loader struct {
	opts  LoadOptions
	set   *Set
	diags Diagnostics
	seen  map[string]bool // absolute paths already loaded
	roots map[string]*projectRoot
	nodes int // counted in the files loaded so far (checkDepth)

	noIncludes bool // the fuzz target loads one file and never the disk
}

// loadFile reads, parses and decodes one file inside a root, then the files
// its cuelists include. The error is for a file that cannot be read at all.
func (l *loader) loadFile(r *projectRoot, rel, name string) error {
	abs, err := r.resolve(rel)
	if err != nil {
		return err
	}
	if l.seen[abs] {
		return nil
	}
	l.seen[abs] = true
	data, tooBig, err := readCapped(r.root, rel, l.opts.MaxFileSize)
	if err != nil {
		return err
	}
	f := &File{Name: filepath.Clean(name), Abs: abs, root: r, rel: rel}
	if tooBig {
		l.set.Files = append(l.set.Files, f)
		l.diags.Add(Error, Pos{File: f.Name, Line: 1, Col: 1}, "", "file-too-large",
			"file is larger than %s; not parsed (raise the limit with --max-file-size)", humanBytes(l.opts.MaxFileSize))
		return nil
	}
	l.loadData(f, data)
	return nil
}

// loadData parses and decodes the content of one file, then its includes.
func (l *loader) loadData(f *File, data []byte) {
	f.Data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	l.set.Files = append(l.set.Files, f)
	if !checkText(f, &l.diags) {
		return
	}
	nodes, ok := checkDepth(f, &l.diags, int(l.opts.MaxFileSize/bytesPerNode), l.nodes)
	if !ok {
		return
	}
	l.nodes += nodes
	l.parse(f)
	for _, doc := range f.Docs {
		if doc.Kind == KindCuelist && !l.noIncludes {
			l.includes(doc)
		}
		doc.value = nil // decoded and schema-checked: the typed values and the YAML nodes are what is kept
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// parse splits the file into YAML documents and decodes each one.
func (l *loader) parse(f *File) {
	dec := yaml.NewDecoder(bytes.NewReader(f.Data))
	index := 0
	for {
		var n yaml.Node
		err := safeDecode(dec, &n)
		if err == io.EOF {
			break
		}
		if err != nil {
			l.diags = append(l.diags, syntaxDiagnostic(f, err))
			break
		}
		if len(n.Content) == 0 || isNull(n.Content[0]) {
			index++
			continue // an empty document between separators
		}
		doc := &Document{File: f, Index: index, Root: resolveAlias(n.Content[0])}
		index++
		if l.decodeDocument(doc) {
			f.Docs = append(f.Docs, doc)
		}
	}
	if len(f.Docs) == 0 && !l.hasDiagnosticsFor(f) {
		l.diags.Add(Warning, Pos{File: f.Name, Line: 1, Col: 1}, "", "empty-file", "file holds no document")
	}
}

func (l *loader) hasDiagnosticsFor(f *File) bool {
	for _, d := range l.diags {
		if d.Pos.File == f.Name {
			return true
		}
	}
	return false
}

// safeDecode turns a panic inside the YAML parser into an error: a hostile
// file must never crash orch.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the YAML parser failed on this input: %v", r)
		}
	}()
	return dec.Decode(n)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && (n.Value == "" || n.Value == "~" || n.Value == "null")
}

// kindKeys are the top-level keys that say what a document is.
var kindKeys = map[string]Kind{"agent": KindAgent, "cuelist": KindCuelist, "message_type": KindMessage}

// decodeDocument converts, classifies, schema-checks and decodes one document.
// It reports false for a document that could not be understood at all.
func (l *loader) decodeDocument(doc *Document) bool {
	conv := &converter{file: doc.File.Name, diags: &l.diags}
	doc.value = conv.convert(doc.Root, 0)
	if conv.bombed {
		return false
	}
	top, ok := doc.value.(map[string]any)
	if !ok || doc.Root.Kind != yaml.MappingNode {
		l.diags.Add(Error, doc.Pos(""), "", "unknown-kind",
			"a spec document must be a mapping with one top-level key agent, cuelist or message_type, not a %s", kindName(doc.Root))
		return false
	}
	if !l.classify(doc, top) {
		return false
	}
	before, _ := l.diags.Count()
	validateSchema(doc, conv.poisoned, &l.diags)
	after, _ := l.diags.Count()
	doc.damaged = after > before || len(conv.poisoned) > 0
	l.decodeTyped(doc, top)
	return true
}

// classify sets doc.Kind from the top-level keys, reporting none or two.
func (l *loader) classify(doc *Document, top map[string]any) bool {
	var first string
	for i := 0; i+1 < len(doc.Root.Content); i += 2 {
		key := doc.Root.Content[i].Value
		kind, ok := kindKeys[key]
		if !ok {
			continue
		}
		if first != "" {
			ptr := Pointer(key)
			l.diags.Add(Error, doc.KeyPos(ptr), ptr, "two-kinds",
				"document has two kinds: %q and %q (line %d); put each in its own document, separated by ---", key, first, doc.KeyPos(Pointer(first)).Line)
			return false
		}
		first, doc.Kind = key, kind
	}
	if first != "" {
		return true
	}
	keys := sortedKeys(top)
	msg := "document of unknown kind: expected a top-level key agent, cuelist or message_type"
	ptr := ""
	if len(keys) > 0 {
		ptr = Pointer(firstKey(doc.Root))
		var names []string
		for k := range kindKeys {
			names = append(names, k)
		}
		sort.Strings(names)
		if s := closest(firstKey(doc.Root), names); s != "" && s != "message_type" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
	}
	l.diags.Add(Error, doc.KeyPos(ptr), ptr, "unknown-kind", "%s", msg)
	return false
}

func firstKey(m *yaml.Node) string {
	if len(m.Content) > 0 {
		return m.Content[0].Value
	}
	return ""
}

// decodeTyped fills the typed value of a document. A value of the wrong shape
// (already reported by the schema) leaves the document out of the typed lists.
func (l *loader) decodeTyped(doc *Document, top map[string]any) {
	switch doc.Kind {
	case KindAgent:
		if obj, ok := top["agent"].(map[string]any); ok {
			a := &Agent{}
			_ = decodeInto(obj, a)
			a.Origin = Origin{Doc: doc, Ptr: "/agent"}
			l.set.Agents = append(l.set.Agents, a)
		}
	case KindCuelist:
		cl := &Cuelist{}
		if obj, ok := top["cuelist"].(map[string]any); ok {
			// Cues are decoded directly: a cuelist may have ten thousand of them.
			rest := make(map[string]any, len(obj))
			for k, v := range obj {
				if k != "cues" {
					rest[k] = v
				}
			}
			_ = decodeInto(rest, cl)
			cl.Origin = Origin{Doc: doc, Ptr: "/cuelist"}
			list, _ := obj["cues"].([]any)
			for i, item := range list {
				if m, ok := item.(map[string]any); ok {
					c := decodeCue(m)
					c.Origin = Origin{Doc: doc, Ptr: Pointer("cuelist", "cues", i)}
					c.Index = len(cl.Cues)
					cl.Cues = append(cl.Cues, c)
				}
			}
			l.set.Cuelists = append(l.set.Cuelists, cl)
		}
	case KindMessage:
		if top["message_type"] == "task.handoff" {
			h := &Handoff{}
			_ = decodeInto(top, h)
			h.Origin = Origin{Doc: doc}
			l.set.Handoffs = append(l.set.Handoffs, h)
			return
		}
		l.set.Messages = append(l.set.Messages, doc)
	}
}

// includes loads the files a cuelist's include globs name, relative to its
// file and inside its project root: an include never reads a file outside
// it, so a spec cannot make orch show another file's lines.
func (l *loader) includes(doc *Document) {
	f := doc.File
	top, _ := doc.value.(map[string]any)
	cl, _ := top["cuelist"].(map[string]any)
	list, _ := cl["include"].([]any)
	type included struct {
		rel, pattern, ptr string
	}
	var files []included
	for i, e := range list {
		pattern, ok := e.(string)
		if !ok || pattern == "" || f.root == nil {
			continue
		}
		ptr := Pointer("cuelist", "include", i)
		rel := filepath.Clean(filepath.Join(filepath.Dir(f.rel), pattern))
		if filepath.IsAbs(pattern) || strings.HasPrefix(pattern, "/") || strings.HasPrefix(pattern, `\`) || climbsOut(rel) {
			doc.includeFailed = true
			l.diags.Add(Error, doc.Pos(ptr), ptr, "outside-root",
				"include %q leads outside the project root %s; includes are relative to this file and stay below the root (--root widens it)", pattern, f.root.dir)
			continue
		}
		matches, err := globIn(f.root.root, rel)
		if err != nil {
			doc.includeFailed = true
			l.diags.Add(Error, doc.Pos(ptr), ptr, "bad-include", "include %q is not a usable glob: %v", pattern, err)
			continue
		}
		if len(matches) == 0 {
			doc.includeFailed = true
			l.diags.Add(Error, doc.Pos(ptr), ptr, "unresolved-include", "include %q matches no file", pattern)
			continue
		}
		for _, m := range matches {
			inDir := []string{m}
			if info, err := f.root.root.Stat(m); err == nil && info.IsDir() {
				inDir, _ = walkIn(f.root.root, m)
			}
			for _, inc := range inDir {
				files = append(files, included{inc, pattern, ptr})
			}
		}
	}
	rels := make([]string, len(files))
	for i, inc := range files {
		rels[i] = inc.rel
	}
	l.hintFields(f.root, rels)
	for _, inc := range files {
		name := filepath.Join(filepath.Dir(f.Name), relTo(filepath.Dir(f.rel), inc.rel))
		err := l.loadFile(f.root, inc.rel, name)
		switch {
		case errors.Is(err, errOutside):
			doc.includeFailed = true
			l.diags.Add(Error, doc.Pos(inc.ptr), inc.ptr, "outside-root", "include %q: %s leads outside the project root %s", inc.pattern, name, f.root.dir)
		case err != nil:
			doc.includeFailed = true
			l.diags.Add(Error, doc.Pos(inc.ptr), inc.ptr, "unreadable-include", "include %q: cannot read %s: %v", inc.pattern, name, err)
		}
	}
}

func dirOf(doc *Document) string {
	if doc == nil || doc.File == nil {
		return "."
	}
	return filepath.Dir(doc.File.Abs)
}
