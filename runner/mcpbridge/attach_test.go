package mcpbridge

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/orch-cli/orch/spec"
)

func sampleAttachment() Attachment {
	return Attachment{URL: "http://127.0.0.1:4242/mcp", Token: "tok123", Shim: []string{"/usr/bin/orch", "mcp", "agent"},
		Own: []spec.MCPServer{
			{Name: "github", Command: "github-mcp-server", Args: []string{"stdio"},
				Env: map[string]any{"GITHUB_TOKEN": map[string]any{"secret": "GITHUB_TOKEN"}, "LOG": "info"}},
			{Name: "docs", URL: "https://docs.example.com/mcp",
				Headers: map[string]any{"Authorization": map[string]any{"secret": "DOCS_AUTH"}, "X-Team": "platform"}},
		},
		Getenv: envMap{"GITHUB_TOKEN": "ghp-secret", "DOCS_AUTH": "Bearer docs-secret"}.get}
}

type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }

func TestAttachmentEnv(t *testing.T) {
	if got := sampleAttachment().Env(); !slices.Equal(got, []string{"ORCH_MCP_URL=http://127.0.0.1:4242/mcp", "ORCH_MCP_TOKEN=tok123"}) {
		t.Errorf("Env: %v", got)
	}
}

func TestAttachmentACP(t *testing.T) {
	a := sampleAttachment()
	servers, skipped := a.ACP(false)
	want := []ACPServer{
		{Name: "orch", Command: "/usr/bin/orch", Args: []string{"mcp", "agent"}, Env: []ACPPair{{"ORCH_MCP_URL", a.URL}, {"ORCH_MCP_TOKEN", "tok123"}}},
		{Name: "github", Command: "github-mcp-server", Args: []string{"stdio"}, Env: []ACPPair{{"GITHUB_TOKEN", "ghp-secret"}, {"LOG", "info"}}},
	}
	if !reflect.DeepEqual(servers, want) || !slices.Equal(skipped, []string{"docs"}) {
		t.Errorf("stdio only:\n got %+v %v\nwant %+v [docs]", servers, skipped, want)
	}
	servers, skipped = a.ACP(true)
	if servers[0].Type != "http" || servers[0].URL != a.URL || servers[0].Headers[0] != (ACPPair{"Authorization", "Bearer tok123"}) || len(skipped) != 0 {
		t.Errorf("with http: %+v %v", servers, skipped)
	}
	if d := servers[2]; d.Type != "http" || !reflect.DeepEqual(d.Headers, []ACPPair{{"Authorization", "Bearer docs-secret"}, {"X-Team", "platform"}}) {
		t.Errorf("their http server: %+v", d)
	}
	// The wire shape of ACP's McpServer: a stdio entry has no type, env is a list of {name, value}.
	raw, _ := json.Marshal(servers[1])
	if string(raw) != `{"name":"github","command":"github-mcp-server","args":["stdio"],"env":[{"name":"GITHUB_TOKEN","value":"ghp-secret"},{"name":"LOG","value":"info"}]}` {
		t.Errorf("wire: %s", raw)
	}
}

func TestAttachmentClaude(t *testing.T) {
	args := sampleAttachment().ClaudeArgs()
	if len(args) != 4 || args[0] != "--mcp-config" || args[2] != "--allowedTools" {
		t.Fatalf("args: %q", args)
	}
	if args[3] != "mcp__orch__*,mcp__github__*,mcp__docs__*" {
		t.Errorf("--allowedTools %s", args[3])
	}
	if strings.Contains(args[1], "tok123") || strings.Contains(args[1], "secret") {
		t.Errorf("a secret on the command line: %s", args[1])
	}
	var cfg struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(args[1]), &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{
		"orch":   {"type": "http", "url": "http://127.0.0.1:4242/mcp", "headers": map[string]any{"Authorization": "Bearer ${ORCH_MCP_TOKEN}"}},
		"github": {"type": "stdio", "command": "github-mcp-server", "args": []any{"stdio"}, "env": map[string]any{"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG": "info"}},
		"docs":   {"type": "http", "url": "https://docs.example.com/mcp", "headers": map[string]any{"Authorization": "${DOCS_AUTH}", "X-Team": "platform"}},
	}
	if !reflect.DeepEqual(cfg.MCPServers, want) {
		t.Errorf("--mcp-config:\n got %v\nwant %v", cfg.MCPServers, want)
	}
}

func TestAttachmentCodex(t *testing.T) {
	args, err := sampleAttachment().CodexArgs()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-c", `mcp_servers.orch.url="http://127.0.0.1:4242/mcp"`,
		"-c", `mcp_servers.orch.bearer_token_env_var="ORCH_MCP_TOKEN"`,
		"-c", `mcp_servers.orch.default_tools_approval_mode="approve"`,
		"-c", `mcp_servers.github.command="github-mcp-server"`,
		"-c", `mcp_servers.github.args=["stdio"]`,
		"-c", `mcp_servers.github.env={"LOG"="info"}`,
		"-c", `mcp_servers.github.env_vars=["GITHUB_TOKEN"]`,
		"-c", `mcp_servers.docs.url="https://docs.example.com/mcp"`,
		"-c", `mcp_servers.docs.http_headers={"X-Team"="platform"}`,
		"-c", `mcp_servers.docs.env_http_headers={"Authorization"="DOCS_AUTH"}`,
	}
	if !slices.Equal(args, want) {
		t.Errorf("codex args:\n got %q\nwant %q", args, want)
	}
	a := sampleAttachment()
	a.Own = []spec.MCPServer{{Name: "db", Command: "db-mcp", Env: map[string]any{"DB_PASSWORD": map[string]any{"secret": "PGPASSWORD"}}}}
	if _, err := a.CodexArgs(); err == nil || !strings.Contains(err.Error(), "write DB_PASSWORD: {secret: DB_PASSWORD}") {
		t.Errorf("a renamed secret for codex: %v", err)
	}
}
