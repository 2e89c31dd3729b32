package spec

import (
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Limits that keep hostile YAML from costing more than a real spec ever would.
const (
	// MaxDepth is the deepest nesting accepted; real specs stay under ten levels.
	MaxDepth = 64
	// MaxAliasNodes caps the nodes produced by expanding aliases in one document
	// (the "billion laughs" alias bomb expands exponentially).
	MaxAliasNodes = 100_000
)

// converter turns a yaml.Node tree into JSON values (map[string]any, []any,
// string, int64, float64, bool, nil), reporting what JSON cannot hold: duplicate
// and non-string keys, infinities and NaN, excessive nesting and alias expansion.
type converter struct {
	file     string
	diags    *Diagnostics
	path     []string        // JSON pointer tokens of the node being converted
	poisoned map[string]bool // pointers already reported: schema errors there add nothing
	aliasing int             // > 0 while inside an alias expansion
	aliasUse *yaml.Node      // the outermost alias being expanded: where a bomb is reported
	expanded int             // nodes produced by alias expansion so far
	bombed   bool
}

func (c *converter) pointer() string {
	if len(c.path) == 0 {
		return ""
	}
	return "/" + strings.Join(c.path, "/")
}

func (c *converter) report(n *yaml.Node, code, format string, args ...any) {
	ptr := c.pointer()
	if c.poisoned == nil {
		c.poisoned = map[string]bool{}
	}
	c.poisoned[ptr] = true
	c.diags.Add(Error, Pos{File: c.file, Line: n.Line, Col: n.Column}, ptr, code, format, args...)
}

func (c *converter) convert(n *yaml.Node, depth int) any {
	if c.bombed {
		return nil
	}
	if depth > MaxDepth {
		c.report(n, "too-deep", "nesting deeper than %d levels", MaxDepth)
		return nil
	}
	if c.aliasing > 0 {
		c.expanded++
		if c.expanded > MaxAliasNodes {
			c.bombed = true
			c.report(c.aliasUse, "alias-bomb", "aliases expand to more than %d nodes; refusing to expand further", MaxAliasNodes)
			return nil
		}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.convert(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil
		}
		if c.aliasing == 0 {
			c.aliasUse = n
		}
		c.aliasing++
		v := c.convert(n.Alias, depth)
		c.aliasing--
		return v
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, e := range n.Content {
			c.path = append(c.path, strconv.Itoa(i))
			out[i] = c.convert(e, depth+1)
			c.path = c.path[:len(c.path)-1]
		}
		return out
	case yaml.MappingNode:
		return c.mapping(n, depth)
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	return nil
}

func (c *converter) mapping(n *yaml.Node, depth int) map[string]any {
	out := make(map[string]any, len(n.Content)/2)
	keys := make(map[string]*yaml.Node, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == mergeTag {
			merges = append(merges, v)
			continue
		}
		name, ok := c.key(k)
		if !ok {
			continue
		}
		c.path = append(c.path, escapePointer(name))
		if first, dup := keys[name]; dup {
			c.report(k, "duplicate-key", "duplicate key %q (first at line %d)", name, first.Line)
		} else {
			keys[name] = k
			out[name] = c.convert(v, depth+1)
		}
		c.path = c.path[:len(c.path)-1]
	}
	// Merged keys (<<: *base) fill in what the mapping does not set itself.
	for _, m := range merges {
		isAlias := m.Kind == yaml.AliasNode
		if isAlias {
			c.aliasing++
		}
		for _, src := range mergeSources(m) {
			if merged, ok := c.convert(src, depth).(map[string]any); ok {
				for k, v := range merged {
					if _, set := out[k]; !set {
						out[k] = v
					}
				}
			}
		}
		if isAlias {
			c.aliasing--
		}
	}
	return out
}

// key returns the string form of a mapping key; JSON objects only have string keys.
func (c *converter) key(k *yaml.Node) (string, bool) {
	k = resolveAlias(k)
	if k.Kind != yaml.ScalarNode {
		c.report(k, "non-string-key", "mapping key must be a string, not a %s", kindName(k))
		return "", false
	}
	switch k.Tag {
	case "!!str", "":
		return k.Value, true
	case "!!null", "!!bool", "!!int", "!!float":
		c.report(k, "non-string-key", "mapping key %s is %s, not a string (quote it: \"%s\")", k.Value, tagName(k.Tag), k.Value)
		return "", false
	}
	return k.Value, true
}

func (c *converter) scalar(n *yaml.Node) any {
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		switch n.Value { // the common spellings without reflection
		case "true":
			return true
		case "false":
			return false
		}
		var b bool
		if err := n.Decode(&b); err == nil {
			return b
		}
		return n.Value
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return i
		}
		var i int64
		if err := n.Decode(&i); err == nil {
			return i
		}
		var f float64 // beyond int64: keep it as a (finite) float
		if err := n.Decode(&f); err == nil && !math.IsInf(f, 0) {
			return f
		}
		c.report(n, "bad-number", "number %s is out of range", n.Value)
		return nil
	case "!!float":
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			err = n.Decode(&f) // .inf, .nan and other YAML spellings
		}
		if err != nil {
			c.report(n, "bad-number", "invalid number %s", n.Value)
			return nil
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			c.report(n, "bad-number", "%s is not a finite number; JSON has no infinity or NaN (quote it if you mean text)", n.Value)
			return nil
		}
		return f
	}
	// !!str, !!timestamp (a date is text to the user), !!binary and custom tags.
	return n.Value
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	return "scalar"
}

func tagName(tag string) string {
	switch tag {
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	}
	return tag
}
