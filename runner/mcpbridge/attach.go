package mcpbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/orch-cli/orch/spec"
)

// Attachment is what an agent is given to reach its MCP servers: orch's
// (the run's endpoint, as the attempt of Token) and its own (mcp_servers:).
// The drivers turn it into what each kind of agent takes; no secret is
// put on a command line (a process's argv is visible to every user of the
// machine): the token and {secret: NAME} values are named, as variables of
// the agent's environment, wherever the agent can read one.
type Attachment struct {
	URL   string   // the run's endpoint
	Token string   // the attempt's
	Shim  []string // the argv of orch mcp agent (the running orch's path)
	Own   []spec.MCPServer
	// Getenv reads orch's environment, for {secret: NAME} values passed
	// as values (ACP's session/new, which is no command line).
	Getenv func(string) string
}

// Env is what the agent's process gets in its environment: the endpoint
// and its attempt's token, for its own MCP client, orch mcp agent and the
// CLIs' configurations that name them.
func (t Attachment) Env() []string {
	return []string{URLVar + "=" + t.URL, TokenVar + "=" + t.Token}
}

// ACPServer is one entry of ACP's session/new mcpServers: a stdio server
// (Command) or, with Type "http", an HTTP one.
type ACPServer struct {
	Type    string    `json:"type,omitempty"`
	Name    string    `json:"name"`
	Command string    `json:"command,omitempty"`
	Args    []string  `json:"args,omitempty"`
	Env     []ACPPair `json:"env,omitempty"`
	URL     string    `json:"url,omitempty"`
	Headers []ACPPair `json:"headers,omitempty"`
}

// ACPPair is a name and its value (an env variable, a header).
type ACPPair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ACP returns session/new's mcpServers: orch's over HTTP when the agent
// advertised mcpCapabilities.http, else orch mcp agent (stdio servers
// every ACP agent takes); its own after it. An HTTP server of its own that
// the agent cannot take is left out and named in skipped.
func (t Attachment) ACP(http bool) (servers []ACPServer, skipped []string) {
	// ACP's stdio env is the server's whole environment in some agents:
	// the shim gets what it needs explicitly.
	orch := ACPServer{Name: spec.MCPServerName, Command: t.Shim[0], Args: t.Shim[1:],
		Env: []ACPPair{{URLVar, t.URL}, {TokenVar, t.Token}}}
	if http {
		orch = ACPServer{Type: "http", Name: spec.MCPServerName, URL: t.URL, Headers: []ACPPair{{"Authorization", "Bearer " + t.Token}}}
	}
	servers = append(servers, orch)
	for _, s := range t.Own {
		switch {
		case s.Command != "":
			servers = append(servers, ACPServer{Name: s.Name, Command: s.Command, Args: nonNil(s.Args), Env: t.pairs(s.EnvValues())})
		case http:
			servers = append(servers, ACPServer{Type: "http", Name: s.Name, URL: s.URL, Headers: t.pairs(s.HeaderValues())})
		default:
			skipped = append(skipped, s.Name)
		}
	}
	return servers, skipped
}

func (t Attachment) pairs(vals []spec.MCPValue) []ACPPair {
	pairs := []ACPPair{}
	for _, v := range vals {
		value := v.Value
		if v.Secret != "" {
			value = t.Getenv(v.Secret)
		}
		pairs = append(pairs, ACPPair{v.Name, value})
	}
	return pairs
}

// ClaudeArgs are claude's flags: --mcp-config with every server (Claude
// Code expands ${NAME} in a server's env, url and headers from its own
// environment, which holds the token and orch's variables) and
// --allowedTools with each server's tools (mcp__NAME__*): headless claude
// cannot ask whether to use them.
func (t Attachment) ClaudeArgs() []string {
	servers := map[string]any{spec.MCPServerName: map[string]any{"type": "http", "url": t.URL,
		"headers": map[string]string{"Authorization": "Bearer ${" + TokenVar + "}"}}}
	allowed := []string{"mcp__" + spec.MCPServerName + "__*"}
	for _, s := range t.Own {
		if s.Command != "" {
			servers[s.Name] = map[string]any{"type": "stdio", "command": s.Command, "args": nonNil(s.Args), "env": claudeValues(s.EnvValues())}
		} else {
			servers[s.Name] = map[string]any{"type": "http", "url": s.URL, "headers": claudeValues(s.HeaderValues())}
		}
		allowed = append(allowed, "mcp__"+s.Name+"__*")
	}
	return []string{"--mcp-config", compactJSON(map[string]any{"mcpServers": servers}), "--allowedTools", strings.Join(allowed, ",")}
}

func claudeValues(vals []spec.MCPValue) map[string]string {
	m := map[string]string{}
	for _, v := range vals {
		if v.Secret != "" {
			m[v.Name] = "${" + v.Secret + "}"
		} else {
			m[v.Name] = v.Value
		}
	}
	return m
}

// CodexArgs are codex's -c overrides of mcp_servers: orch's over HTTP with
// its token read from ORCH_MCP_TOKEN (bearer_token_env_var) and its tools
// approved (default_tools_approval_mode), the agent's
// own with their secrets forwarded from the environment by name (env_vars,
// env_http_headers). Codex forwards a variable only under its own name:
// an env value {secret: NAME} under another name is refused.
func (t Attachment) CodexArgs() ([]string, error) {
	var args []string
	set := func(server, key string, v any) {
		args = append(args, "-c", fmt.Sprintf("mcp_servers.%s.%s=%s", server, key, tomlValue(v)))
	}
	set(spec.MCPServerName, "url", t.URL)
	set(spec.MCPServerName, "bearer_token_env_var", TokenVar)
	// orch's tools need no approval from codex (orch's tools: policy
	// decides, as --allowedTools mcp__orch__* does for claude): codex exec
	// never asks, so it would refuse every call of a tool not read-only.
	set(spec.MCPServerName, "default_tools_approval_mode", "approve")
	for _, s := range t.Own {
		literal, forwarded := map[string]string{}, map[string]string{}
		vals := s.HeaderValues()
		if s.Command != "" {
			vals = s.EnvValues()
		}
		for _, v := range vals {
			if v.Secret == "" {
				literal[v.Name] = v.Value
				continue
			}
			if s.Command != "" && v.Secret != v.Name {
				return nil, fmt.Errorf("mcp server %s: codex passes a variable to a server only under its own name: write %s: {secret: %s} (and set %s in orch's environment)", s.Name, v.Name, v.Name, v.Name)
			}
			forwarded[v.Name] = v.Secret
		}
		if s.Command != "" {
			set(s.Name, "command", s.Command)
			set(s.Name, "args", nonNil(s.Args))
			if len(literal) > 0 {
				set(s.Name, "env", literal)
			}
			if len(forwarded) > 0 {
				set(s.Name, "env_vars", slices.Sorted(maps.Keys(forwarded)))
			}
			continue
		}
		set(s.Name, "url", s.URL)
		if len(literal) > 0 {
			set(s.Name, "http_headers", literal)
		}
		if len(forwarded) > 0 {
			set(s.Name, "env_http_headers", forwarded)
		}
	}
	return args, nil
}

// tomlValue writes a string, a list of strings or a table of strings as
// TOML: a JSON string (without HTML escapes) is a TOML basic string.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return compactJSON(v)
	case []string:
		quoted := make([]string, len(v))
		for i, s := range v {
			quoted[i] = compactJSON(s)
		}
		return "[" + strings.Join(quoted, ",") + "]"
	case map[string]string:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, compactJSON(k)+"="+compactJSON(v[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	panic(fmt.Sprintf("tomlValue: %T", v))
}

func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings and maps of strings always encode
	return strings.TrimSuffix(b.String(), "\n")
}
