package spec

import (
	"sort"
)

// MCPServer is an MCP server of an agent's own (mcp_servers:), passed to
// the agent beside orch's own server named orch: a coder gets the GitHub or
// database server its work needs. It is a stdio server (Command, Args,
// Env), which the agent starts, or an HTTP one (URL, Headers).
type MCPServer struct {
	Name    string   `json:"name"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env and Headers values are a scalar, or {secret: NAME}: the value of
	// NAME in orch's environment, masked as every secret (MCPValue).
	Env     map[string]any `json:"env,omitempty"`
	URL     string         `json:"url,omitempty"`
	Headers map[string]any `json:"headers,omitempty"`
}

// MCPValue is one env or header value of an MCP server: Secret names the
// variable of orch's environment it is taken from, else Value is it.
type MCPValue struct {
	Name   string // the variable or header
	Value  string
	Secret string
}

// MCPServerName is the name of orch's own server, which an agent's may not
// take.
const MCPServerName = "orch"

// EnvValues are s.Env's values, sorted by name.
func (s MCPServer) EnvValues() []MCPValue { return mcpValues(s.Env) }

// HeaderValues are s.Headers' values, sorted by name.
func (s MCPServer) HeaderValues() []MCPValue { return mcpValues(s.Headers) }

// Secrets are the names of orch's variables s takes values from.
func (s MCPServer) Secrets() []string {
	var names []string
	for _, v := range append(s.EnvValues(), s.HeaderValues()...) {
		if v.Secret != "" {
			names = append(names, v.Secret)
		}
	}
	return names
}

func mcpValues(m map[string]any) []MCPValue {
	vals := make([]MCPValue, 0, len(m))
	for k, v := range m {
		if ref, ok := v.(map[string]any); ok {
			name, _ := ref["secret"].(string)
			vals = append(vals, MCPValue{Name: k, Secret: name})
			continue
		}
		vals = append(vals, MCPValue{Name: k, Value: EnvValue(v)})
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i].Name < vals[j].Name })
	return vals
}

// mcpServers checks an agent's MCP servers beyond their schema: unique
// names other than orch's, a stdio or an HTTP server (not both, not
// neither, no field of the other kind), given to an agent that takes MCP
// servers.
func (c *checker) mcpServers(a *Agent) {
	if len(a.MCPServers) > 0 && CLIProtocols[a.Protocol] == "" && a.Protocol != "acp" {
		c.warnAt(a.Origin, "/mcp_servers", "unused-field",
			"mcp_servers are passed to acp, claude-code and codex agents; agent %q is protocol: %s (it gets orch's endpoint in ORCH_MCP_URL and ORCH_MCP_TOKEN, and starts the servers it needs itself)", a.ID, protocolName(a))
	}
	seen := map[string]int{}
	for i, s := range a.MCPServers {
		at := func(field string) string {
			if field == "" {
				return Pointer("mcp_servers", i)
			}
			return Pointer("mcp_servers", i, field)
		}
		switch first, dup := seen[s.Name]; {
		case s.Name == MCPServerName:
			c.errorAt(a.Origin, at("name"), "bad-value", "mcp server name %q is orch's own server's (every agent gets it); name yours otherwise", s.Name)
		case dup:
			c.errorAt(a.Origin, at("name"), "duplicate-id", "agent %q has two mcp servers named %q (first at %s)", a.ID, s.Name, a.At(Pointer("mcp_servers", first, "name")))
		case s.Name != "":
			seen[s.Name] = i
		}
		stdio, web := s.Command != "", s.URL != ""
		switch {
		case !stdio && !web:
			c.errorAt(a.Origin, at(""), "mcp-server", "mcp server %q needs command (a stdio server the agent starts) or url (an HTTP server)", s.Name)
		case stdio && web:
			c.errorAt(a.Origin, at("url"), "mcp-server", "mcp server %q has both command and url; a server is stdio (command, args, env) or HTTP (url, headers)", s.Name)
		case stdio && len(s.Headers) > 0:
			c.errorAt(a.Origin, at("headers"), "mcp-server", "mcp server %q is a stdio server (command): headers are for an HTTP server (url); give it env instead", s.Name)
		case web && (len(s.Args) > 0 || len(s.Env) > 0):
			field := "args"
			if len(s.Args) == 0 {
				field = "env"
			}
			c.errorAt(a.Origin, at(field), "mcp-server", "mcp server %q is an HTTP server (url): %s is for a stdio server (command); give it headers instead", s.Name, field)
		}
	}
}
