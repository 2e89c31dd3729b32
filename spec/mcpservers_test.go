package spec

import (
	"reflect"
	"testing"
)

func TestMCPServerValues(t *testing.T) {
	s := MCPServer{Name: "github", Command: "github-mcp-server",
		Env:     map[string]any{"TOKEN": map[string]any{"secret": "GITHUB_TOKEN"}, "RETRIES": 3.0, "DEBUG": true, "A": "x"},
		Headers: map[string]any{"Authorization": map[string]any{"secret": "AUTH"}}}
	want := []MCPValue{{Name: "A", Value: "x"}, {Name: "DEBUG", Value: "true"}, {Name: "RETRIES", Value: "3"}, {Name: "TOKEN", Secret: "GITHUB_TOKEN"}}
	if got := s.EnvValues(); !reflect.DeepEqual(got, want) {
		t.Errorf("EnvValues:\n got %+v\nwant %+v", got, want)
	}
	if got := s.Secrets(); !reflect.DeepEqual(got, []string{"GITHUB_TOKEN", "AUTH"}) {
		t.Errorf("Secrets: %v", got)
	}
}

// mcp_servers reach the typed agent from YAML, positions kept.
func TestMCPServersLoaded(t *testing.T) {
	tree(t, map[string]string{"a.yaml": `agent:
  id: coder
  protocol: acp
  command: [sh]
  mcp_servers:
    - name: docs
      url: https://docs.example.com/mcp
      headers: {Authorization: {secret: DOCS_AUTH}}
`})
	set, diags := validate(t, "a.yaml")
	expectDiags(t, diags)
	got := set.Agents[0].MCPServers
	if len(got) != 1 || got[0].URL != "https://docs.example.com/mcp" || !reflect.DeepEqual(got[0].Secrets(), []string{"DOCS_AUTH"}) {
		t.Fatalf("%+v", got)
	}
}
