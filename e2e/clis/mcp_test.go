//go:build clis_e2e && linux

package clis

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/mockmodel"
)

// driveFiles: a broken cuelist, and one whose agent (a Python jsonl agent
// on examples/lib/orch_agent.py) asks the person a question and outputs
// the answer.
func driveFiles(t *testing.T) map[string]string {
	lib, err := filepath.Abs(filepath.Join("..", "..", "examples", "lib"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"broken.yaml": `cuelist:
  id: broken
  cues:
    - {id: A, agents: [nobody]}
`,
		"cuelist.yaml": `cuelist:
  id: ship
  defaults: {ack_timeout: 1m}
  cues:
    - {id: ASK, agents: [asker]}
---
agent: {id: asker, protocol: jsonl, command: [python3, asker.py], env: {PYTHONDONTWRITEBYTECODE: "1"}}
`,
		"asker.py": `import sys
sys.path.insert(0, ` + strconv.Quote(lib) + `)
import orch_agent
orch_agent.run(lambda task: {"answer": task.ask("Ship it?")})
`,
	}
}

// inspector runs the MCP Inspector's CLI against orch mcp (in the project)
// and decodes what it prints. It runs in its own build directory: this
// version finds its package.json from there only.
func inspector(t *testing.T, w *world, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	argv := append([]string{"--cli", orchBin, "mcp", "--root", w.dir}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(installed.inspector, "node_modules", ".bin", "mcp-inspector-cli"), argv...)
	cmd.Dir = filepath.Join(installed.inspector, "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	cmd.Env = w.env
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("mcp-inspector-cli %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("mcp-inspector-cli %s printed %s: %v", strings.Join(args, " "), out, err)
	}
	return doc
}

// TestInspectorDrivesOrch: a real MCP client from npm lists orch mcp's
// tools, validates a broken spec (its diagnostics), starts a run and reads
// its status.
func TestInspectorDrivesOrch(t *testing.T) {
	w := newWorld(t, nil, false)
	files := driveFiles(t)
	files["quick.yaml"] = "cuelist:\n  id: quick\n  cues:\n    - {id: A, agents: [ok]}\n---\nagent: {id: ok, command: [\"true\"]}\n"
	w.write(files, false)

	list := inspector(t, w, "--method", "tools/list")
	var names []string
	for _, tool := range list["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	for _, want := range []string{"validate", "plan", "schema", "run", "status", "events", "logs", "answer", "go", "ack",
		"stop", "retry", "resume", "blackboard_get", "blackboard_set", "wait"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list: no %s in %v", want, names)
		}
	}

	res := inspector(t, w, "--method", "tools/call", "--tool-name", "validate", "--tool-arg", `paths=["broken.yaml"]`)
	got := res["structuredContent"].(map[string]any)
	diags, _ := got["diagnostics"].([]any)
	if got["valid"] != false || len(diags) == 0 {
		t.Fatalf("validate broken.yaml: %v", res)
	}
	d := diags[0].(map[string]any)
	if !strings.HasSuffix(d["file"].(string), "broken.yaml") || d["line"] != 4.0 || !strings.Contains(d["message"].(string), "nobody") {
		t.Errorf("the diagnostic: %v, want broken.yaml:4 naming the agent nobody", d)
	}

	res = inspector(t, w, "--method", "tools/call", "--tool-name", "run", "--tool-arg", "cuelist=quick.yaml")
	run, _ := res["structuredContent"].(map[string]any)["run"].(string)
	if len(run) != 12 {
		t.Fatalf("run: %v", res)
	}
	res = inspector(t, w, "--method", "tools/call", "--tool-name", "status", "--tool-arg", "run="+run)
	st := res["structuredContent"].(map[string]any)
	if st["id"] != run || st["cuelist"] != "quick" {
		t.Errorf("status of %s: %v", run, res)
	}
}

// TestClaudeDrivesOrch: headless claude, with orch mcp as its MCP server
// (--mcp-config, as claude mcp add orch -- orch mcp configures it), is
// scripted by the mock model to validate a broken spec and a good one, run
// the good one, wait for its question, answer it and wait for the end.
func TestClaudeDrivesOrch(t *testing.T) {
	script := mockmodel.Script{
		{Text: "Checking the broken spec.", Tool: &mockmodel.ToolCall{Name: "validate", Args: map[string]any{"paths": []any{"broken.yaml"}}}},
		{Text: "Checking the fixed one.", Tool: &mockmodel.ToolCall{Name: "validate", Args: map[string]any{"paths": []any{"cuelist.yaml"}}}},
		{Text: "Running it.", Tool: &mockmodel.ToolCall{Name: "run", Args: map[string]any{"cuelist": "cuelist.yaml"}}},
		{Text: "Waiting for it.", Tool: &mockmodel.ToolCall{Name: "wait", Args: map[string]any{"run": "{{run}}", "until": "question", "timeout_seconds": 120.0}}},
		{Text: "Answering.", Tool: &mockmodel.ToolCall{Name: "answer", Args: map[string]any{"run": "{{run}}", "question": "{{inbox.0.id}}", "answer": "ship it"}}},
		{Text: "Waiting for the end.", Tool: &mockmodel.ToolCall{Name: "wait", Args: map[string]any{"run": "{{run}}", "until": "end", "timeout_seconds": 120.0}}},
		{Text: "The run completed."},
	}
	w := newWorld(t, map[string]mockmodel.Script{"drive": script}, false)
	files := driveFiles(t)
	files["mcp.json"] = `{"mcpServers": {"orch": {"command": "orch", "args": ["mcp"]}}}`
	w.write(files, false)

	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(installed.current, "claude"), "-p", mockmodel.Marker("drive")+" Check the cuelist, run it and answer its question.",
		"--mcp-config", "mcp.json", "--strict-mcp-config", "--allowedTools", "mcp__orch__*", "--output-format", "json")
	cmd.Dir = w.dir
	// claude defers MCP tools behind its ToolSearch tool, which the mock
	// model does not use: the tools are offered at once.
	cmd.Env = append(slices.Clone(w.env), "ENABLE_TOOL_SEARCH=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude: %v\n%s\nthe model's requests:\n%s", err, out, describe(w.scripted("drive")))
	}
	reqs := followed(t, w, "drive", len(script))
	var calls []string
	for _, r := range reqs {
		if r.Call != "" {
			calls = append(calls, strings.Fields(r.Call)[0])
		}
	}
	want := []string{"mcp__orch__validate", "mcp__orch__validate", "mcp__orch__run", "mcp__orch__wait", "mcp__orch__answer", "mcp__orch__wait"}
	if !slices.Equal(calls[:min(len(calls), len(want))], want) {
		t.Errorf("claude called %v, want %v\n%s", calls, want, describe(reqs))
	}
	s := w.status()
	if s.State != "completed" || len(s.Cues) != 1 {
		t.Fatalf("the run claude started: %+v\nclaude said: %s", s, out)
	}
	var st struct {
		Cues []struct {
			Outputs map[string]any `json:"outputs"`
		} `json:"cues"`
	}
	if err := json.Unmarshal([]byte(w.orch("status", "last", "--output", "json").stdout), &st); err != nil || st.Cues[0].Outputs["answer"] != "ship it" {
		t.Errorf("the asker's output: %+v %v, want claude's answer", st, err)
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".orch", "mcp-"+s.ID+".log")); err != nil {
		t.Errorf("the detached run's log: %v", err)
	}
}
