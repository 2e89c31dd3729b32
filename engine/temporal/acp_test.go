//go:build unix

package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/internal/fakeacp"
)

// With ORCH_FAKE_ACP=1 the test binary is the fake ACP agent
// (internal/fakeacp) instead of the tests.
func init() {
	if os.Getenv("ORCH_FAKE_ACP") == "1" {
		os.Exit(fakeacp.Main(os.Args[1:]))
	}
}

// An ACP agent runs on a worker: its process initialized at WARNING, a
// session at STANDBY, a turn at GO, over three activities; its permission
// request becomes a question for the person through the workflow, and the
// answer (an option's number) picks the option.
func TestACPAgentOnWorker(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	yaml := fmt.Sprintf(`agent:
  id: coder
  protocol: acp
  command: [%q, permission, execute]
  env: {ORCH_FAKE_ACP: "1"}
  permissions: {read: allow}
  provides: [text, summary]
---
cuelist:
  id: acp
  cues:
    - {id: a, agents: [coder]}
`, self)
	if err := os.WriteFile(filepath.Join(root, "acp.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	link := &fakeLink{env: env, board: map[string]BBValue{}, answer: "1"}
	acts := &Activities{Root: root, Link: func(context.Context) WorkflowLink { return link }}
	defer acts.Close()
	RegisterWorkflow(env)
	RegisterActivities(env, acts)
	env.SetTestTimeout(2 * 60e9)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: "r-acp", Path: "acp.yaml", SpecHash: specHashOf(t, root, "acp.yaml")})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	evs := events(t, env)
	if res.State != "completed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	out := outputsOf(t, evs, "a")
	if text, _ := out["text"].(string); !strings.Contains(text, "permission: selected allow_always") || out["summary"] != "asked" {
		t.Errorf("outputs %v", out)
	}
	if len(link.asked) != 1 || !strings.Contains(link.asked[0].Question, `"Write notes.txt"`) || len(link.asked[0].Options) != 3 {
		t.Errorf("asked %+v", link.asked)
	}
}

// orch's MCP server is the worker's for its agents, with their own
// mcp_servers: an ACP agent's tool calls (over HTTP, as it advertises) act
// as its attempt through the run's workflow: a blackboard write and read, a
// question answered by the person; a tool this engine does not serve is
// not offered.
func TestMCPToolsOnWorker(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	yaml := fmt.Sprintf(`agent:
  id: coder
  protocol: acp
  command: [%q, mcp, 'blackboard_write {"key": "plan", "value": "from acp"}', 'blackboard_read {"key": "plan"}', 'ask {"question": "Which plan?"}', 'handoff {"to_agent": "x", "context": {}}']
  env: {ORCH_FAKE_ACP: "1", FAKE_ACP_MCP_HTTP: "1"}
  provides: [text]
  mcp_servers:
    - name: docs
      url: https://docs.example.com/mcp
---
agent:
  id: after
  command: ["true"]
---
cuelist:
  id: mcp
  cues:
    - {id: w, agents: [coder]}
    - {id: r, agents: [after], dependencies: [w]}
`, self)
	if err := os.WriteFile(filepath.Join(root, "mcp.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	link := &fakeLink{env: env, board: map[string]BBValue{}, answer: "the second"}
	acts := &Activities{Root: root, Link: func(context.Context) WorkflowLink { return link }}
	defer acts.Close()
	RegisterWorkflow(env)
	RegisterActivities(env, acts)
	env.SetTestTimeout(2 * 60e9)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: "r-mcp", Path: "mcp.yaml", SpecHash: specHashOf(t, root, "mcp.yaml")})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	evs := events(t, env)
	if res.State != "completed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	text, _ := outputsOf(t, evs, "w")["text"].(string)
	for _, want := range []string{
		"servers: orch(http) docs(http)",
		`blackboard_write: {"key":"plan","version":1}`,
		`blackboard_read: {"author":"coder","found":true,"value":"from acp","version":1}`,
		`ask: {"answer":"the second"}`,
		"handoff: error: tool handoff is denied by the agent's tools: policy: handoff is not supported by --engine temporal in this version",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the agent's reply:\n%s", want, text)
		}
	}
	if len(link.asked) != 1 || link.asked[0].Question != "Which plan?" {
		t.Errorf("asked %+v", link.asked)
	}
}
