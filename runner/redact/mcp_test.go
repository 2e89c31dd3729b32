package redact

import (
	"testing"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// A value an agent passes to its own MCP server from orch's environment
// ({secret: NAME}) is a secret, whatever NAME says; a literal value of a
// secret-looking variable too.
func TestMCPServerSecrets(t *testing.T) {
	t.Setenv("GH_PAT_VALUE", "ghp-0123456789abcdef")
	p := &planner.Plan{Agents: map[string]*spec.Agent{"coder": {ID: "coder", MCPServers: []spec.MCPServer{{
		Name: "github", Command: "github-mcp-server",
		Env: map[string]any{"GITHUB_PERSONAL_ACCESS_TOKEN": map[string]any{"secret": "GH_PAT_VALUE"}, "DB_PASSWORD": "hunter2hunter2", "LOG": "info-verbose"},
	}}}}}
	d := ForPlan(p)
	for in, want := range map[string]string{
		"token ghp-0123456789abcdef": "token [redacted:GH_PAT_VALUE]",
		"pw hunter2hunter2":          "pw [redacted:DB_PASSWORD]",
		"log info-verbose":           "log info-verbose",
	} {
		if got := d.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if got := d.SecretsEnv(); got != "ORCH_SECRETS=GH_PAT_VALUE" {
		t.Errorf("SecretsEnv = %q", got)
	}
}
