package spec

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Kind is what a document describes, decided by its top-level key.
type Kind string

const (
	KindAgent   Kind = "agent"
	KindCuelist Kind = "cuelist"
	KindMessage Kind = "message"
)

// File is one spec file as read from disk.
type File struct {
	Name string // as shown in diagnostics: the path given, or the includer's dir joined with the match
	Abs  string // absolute, symlinks resolved: how a file reached twice is recognised
	Data []byte // content (BOM removed)
	Docs []*Document

	lineStarts []int // byte offset of each line, built on first use

	root *projectRoot // where it was read, and its includes are read
	rel  string       // its path relative to root
}

// Line returns the text of 1-based line n without its line ending, or "".
// Lines end as YAML's do: LF, CRLF, or a CR alone.
func (f *File) Line(n int) string {
	if f == nil || n < 1 || n > f.Lines() {
		return ""
	}
	start, end := f.lineStarts[n-1], len(f.Data)
	if n < len(f.lineStarts) {
		end = f.lineStarts[n] - 1
	}
	return strings.TrimSuffix(string(f.Data[start:end]), "\r")
}

// Lines returns how many lines the file has, counted as YAML counts them.
func (f *File) Lines() int {
	if f.lineStarts == nil {
		f.lineStarts = []int{0}
		for i := 0; i < len(f.Data); i++ {
			if n := lineBreak(f.Data, i); n > 0 {
				i += n - 1
				f.lineStarts = append(f.lineStarts, i+1)
			}
		}
	}
	return len(f.lineStarts)
}

// lineBreak returns the length of the line break at data[i]: 2 for CRLF, 1
// for LF or a CR alone, 0 if data[i] ends no line. Every count of lines in
// this package goes through it, so that positions agree with yaml.v3's.
func lineBreak(data []byte, i int) int {
	switch data[i] {
	case '\n':
		return 1
	case '\r':
		if i+1 < len(data) && data[i+1] == '\n' {
			return 2
		}
		return 1
	}
	return 0
}

// Document is one YAML document of a file. It keeps the yaml.Node tree so that
// any JSON pointer into Value maps back to a line and column.
type Document struct {
	File  *File
	Index int // 0-based position in the file's stream
	Kind  Kind
	Root  *yaml.Node // the top-level mapping
	value any        // the document as JSON values while it is loaded; released after (a 10k-cue cuelist is ~25 MB of them)

	keyIndex map[*yaml.Node]map[string]int // lazily built for big mappings

	// includeFailed is set on a cuelist whose include named nothing loadable:
	// its references to agents are then unreliable, and not reported again.
	includeFailed bool
	// damaged is set when the document has schema errors: a field may be
	// lost to a typo (provide: for provides), so what it declares is unsure.
	damaged bool
}

// Pos returns the position of the value at the JSON pointer ptr. When the
// pointer does not resolve completely, the deepest node reached is used.
func (d *Document) Pos(ptr string) Pos {
	n, _ := d.lookup(ptr)
	return d.nodePos(n)
}

// KeyPos returns the position of the key of the last token of ptr (the place to
// point at for an unknown field), or the value's position if there is no key.
func (d *Document) KeyPos(ptr string) Pos {
	n, key := d.lookup(ptr)
	if key != nil {
		return d.nodePos(key)
	}
	return d.nodePos(n)
}

func (d *Document) nodePos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: d.File.Name, Line: 1, Col: 1}
	}
	return Pos{File: d.File.Name, Line: n.Line, Col: n.Column}
}

// lookup walks ptr from the root; it returns the deepest node reached and, if the
// last step was a mapping key that exists, that key's node.
func (d *Document) lookup(ptr string) (node, key *yaml.Node) {
	node = d.Root
	if ptr == "" || node == nil {
		return node, nil
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = unescapePointer(tok)
		node = resolveAlias(node)
		key = nil
		switch node.Kind {
		case yaml.MappingNode:
			k, v := d.mappingGet(node, tok)
			if v == nil {
				return node, nil
			}
			node, key = v, k
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node.Content) {
				return node, nil
			}
			node = node.Content[i]
		default:
			return node, nil
		}
	}
	return node, key
}

// mappingGet finds key in a mapping node, following merge keys (<<). Big
// mappings get an index so that many lookups stay linear overall.
func (d *Document) mappingGet(m *yaml.Node, key string) (k, v *yaml.Node) {
	const indexAbove = 32
	if len(m.Content) > 2*indexAbove {
		if d.keyIndex == nil {
			d.keyIndex = map[*yaml.Node]map[string]int{}
		}
		idx, ok := d.keyIndex[m]
		if !ok {
			idx = make(map[string]int, len(m.Content)/2)
			for i := 0; i+1 < len(m.Content); i += 2 {
				if _, dup := idx[m.Content[i].Value]; !dup {
					idx[m.Content[i].Value] = i
				}
			}
			d.keyIndex[m] = idx
		}
		if i, ok := idx[key]; ok && m.Content[i].Tag != mergeTag {
			return m.Content[i], m.Content[i+1]
		}
	} else {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key && m.Content[i].Tag != mergeTag {
				return m.Content[i], m.Content[i+1]
			}
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Tag == mergeTag {
			for _, src := range mergeSources(m.Content[i+1]) {
				if k, v := d.mappingGet(src, key); v != nil {
					return k, v
				}
			}
		}
	}
	return nil, nil
}

const mergeTag = "!!merge"

// mergeSources returns the mappings a merge value (<<: *a or <<: [*a, *b]) brings in.
func mergeSources(v *yaml.Node) []*yaml.Node {
	v = resolveAlias(v)
	switch v.Kind {
	case yaml.MappingNode:
		return []*yaml.Node{v}
	case yaml.SequenceNode:
		var out []*yaml.Node
		for _, e := range v.Content {
			if e = resolveAlias(e); e.Kind == yaml.MappingNode {
				out = append(out, e)
			}
		}
		return out
	}
	return nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// Pointer builds a JSON pointer from tokens, escaping '~' and '/'.
func Pointer(tokens ...any) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		switch t := t.(type) {
		case int:
			b.WriteString(strconv.Itoa(t))
		case string:
			b.WriteString(escapePointer(t))
		}
	}
	return b.String()
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapePointer(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
