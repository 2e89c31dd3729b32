package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/internal/toolschema"
)

// tool is one of the server's tools, added to each Server.
type tool struct {
	def *mcp.Tool
	add func(*Server)
}

// Kinds of tool, for their annotations.
var (
	reads   = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	acts    = &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	starts  = &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)} // a run's agents act on the world
	stops   = &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
	answers = &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
)

func ptr[T any](v T) *T { return &v }

// define makes a tool whose input schema comes from In (fix adjusts it:
// enums, bounds); call's result is the tool's structured output (a JSON
// object: the JSON the command prints with --output json), its error the
// tool's error result (the command's message).
func define[In any](name, title, description string, ann *mcp.ToolAnnotations, fix toolschema.Fix,
	call func(ctx context.Context, s *Server, req *mcp.CallToolRequest, in In) (any, error)) tool {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: the input schema of %s: %v", name, err)) // a programming error: every test builds every tool
	}
	if fix != nil {
		fix(in)
	}
	a := *ann
	a.Title = title
	def := &mcp.Tool{Name: name, Title: title, Description: description, InputSchema: in, Annotations: &a}
	return tool{def: def, add: func(s *Server) {
		mcp.AddTool(s.mcp, def, func(ctx context.Context, req *mcp.CallToolRequest, args In) (*mcp.CallToolResult, any, error) {
			out, err := call(ctx, s, req, args)
			if err != nil {
				return nil, nil, err
			}
			return nil, out, nil
		})
	}}
}

// Names lists the tools' names, in the order tools/list gives them.
func Names() []string {
	names := make([]string, len(tools()))
	for i, t := range tools() {
		names[i] = t.def.Name
	}
	return names
}

// Tool returns the tool named name (its schema and annotations), or nil.
func Tool(name string) *mcp.Tool {
	for _, t := range tools() {
		if t.def.Name == name {
			return t.def
		}
	}
	return nil
}
