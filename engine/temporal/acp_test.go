//go:build unix

package temporal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/fakeacp"
	"github.com/orch-cli/orch/runner/record"
)

// With ORCH_FAKE_ACP=1 the test binary is the fake ACP agent
// (internal/fakeacp) instead of the tests.
func init() {
	if os.Getenv("ORCH_FAKE_ACP") == "1" {
		os.Exit(fakeacp.Main(os.Args[1:]))
	}
}

// runFake runs a cuelist (yaml, with %[1]q for this test binary as the
// fake ACP agent) on workers whose questions are answered with answer, and
// returns its events once it completed.
func runFake(t *testing.T, yaml, answer string) ([]record.Event, *fakeLink) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "c.yaml"), []byte(fmt.Sprintf(yaml, self)), 0o644); err != nil {
		t.Fatal(err)
	}
	env, link := linkedEnv(t, root, answer)
	return completed(t, env, RunInput{RunID: testRunID("r-fake"), Path: "c.yaml", SpecHash: specHashOf(t, root, "c.yaml")}), link
}

// An ACP agent runs on a worker: its process initialized at WARNING, a
// session at STANDBY, a turn at GO, over three activities; its permission
// request becomes a question for the person through the workflow, and the
// answer (an option's number) picks the option.
func TestACPAgentOnWorker(t *testing.T) {
	evs, link := runFake(t, `agent:
  id: coder
  protocol: acp
  command: [%[1]q, permission, execute]
  env: {ORCH_FAKE_ACP: "1"}
  permissions: {read: allow}
  provides: [text, summary]
---
cuelist:
  id: acp
  cues:
    - {id: a, agents: [coder]}
`, "1")
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
// question answered by the person; a tool its agent may not use is not
// offered.
func TestMCPToolsOnWorker(t *testing.T) {
	evs, link := runFake(t, `agent:
  id: coder
  protocol: acp
  command: [%[1]q, mcp, 'blackboard_write {"key": "plan", "value": "from acp"}', 'blackboard_read {"key": "plan"}', 'ask {"question": "Which plan?"}', 'handoff {"to_agent": "x", "context": {}}']
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
`, "the second")
	text, _ := outputsOf(t, evs, "w")["text"].(string)
	for _, want := range []string{
		"servers: orch(http) docs(http)",
		`blackboard_write: {"key":"plan","version":1}`,
		`blackboard_read: {"author":"coder","found":true,"value":"from acp","version":1}`,
		`ask: {"answer":"the second"}`,
		`handoff: error: tool handoff is denied by the agent's tools: policy: agent coder may not use "handoff" at handoff depth 0`, // it has no handoff_to
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the agent's reply:\n%s", want, text)
		}
	}
	if len(link.asked) != 1 || link.asked[0].Question != "Which plan?" {
		t.Errorf("asked %+v", link.asked)
	}
}
