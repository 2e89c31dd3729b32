// Package toolschema adjusts the input schema jsonschema.For derives from
// an MCP tool's argument struct, where struct tags cannot say it: the
// values a string may take, a number's bounds. Both of orch's MCP servers
// (runner/mcpbridge for its agents, mcpserver for a coding agent) use it.
package toolschema

import "github.com/google/jsonschema-go/jsonschema"

// Fix adjusts a schema.
type Fix func(*jsonschema.Schema)

// Enum restricts the string property prop to values.
func Enum(prop string, values ...string) Fix {
	return func(s *jsonschema.Schema) {
		for _, v := range values {
			s.Properties[prop].Enum = append(s.Properties[prop].Enum, v)
		}
	}
}

// Bounds sets the number property prop's minimum and maximum.
func Bounds(prop string, lo, hi float64) Fix {
	return func(s *jsonschema.Schema) {
		s.Properties[prop].Minimum, s.Properties[prop].Maximum = &lo, &hi
	}
}

// Min sets the number property prop's minimum.
func Min(prop string, lo float64) Fix {
	return func(s *jsonschema.Schema) { s.Properties[prop].Minimum = &lo }
}

// All applies fixes in turn.
func All(fixes ...Fix) Fix {
	return func(s *jsonschema.Schema) {
		for _, f := range fixes {
			f(s)
		}
	}
}
