//go:build unix

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/store"
)

// The tools orch mcp offers (the names).
var driveTools = []string{"validate", "plan", "schema", "run", "status", "events", "logs", "answer", "go", "ack",
	"stop", "retry", "resume", "blackboard_get", "blackboard_set", "wait"}

// driveSpecs: a cuelist whose agent asks the person a question (over the
// jsonl protocol) and outputs the answer, then a manual cue; and a broken
// one.
var driveSpecs = map[string]string{
	"specs/cuelist.yaml": `cuelist:
  id: ship
  inputs: {target: staging}
  cues:
    - id: ASK
      agents: [asker]
      inputs: {script: [{ask: {question: "Ship it?", complexity: quick}}]}
    - {id: DEPLOY, agents: [deployer], dependencies: [ASK], go: manual}
---
agent: {id: asker, protocol: jsonl, command: [script-agent]}
---
agent: {id: deployer, command: [sh, -c, 'echo deployed']}
`,
	"broken/cuelist.yaml": `cuelist:
  id: broken
  cues:
    - {id: A, agents: [nobody]}
`,
}

// mcpSession starts orch mcp in dir (the test binary as orch, TestMain) and
// connects the Go SDK's client to it over stdio.
func mcpSession(t *testing.T, dir string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command("orch", "mcp")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "ORCH_DB=") // the project's database, as orch status finds it
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to orch mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// driveCall calls a tool (bounded by a minute) and returns its result.
func driveCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// okTool calls a tool that must succeed and decodes its structured output.
func okTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res := driveCall(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s %v: error %s", name, args, toolText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: structured output %s: %v", name, b, err)
	}
}

// errTool calls a tool that must fail and returns its message.
func errTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := driveCall(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s %v: no error (%s)", name, args, toolText(res))
	}
	return toolText(res)
}

func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type waited struct {
	Run   string `json:"run"`
	Why   string `json:"why"`
	State string `json:"state"`
	Inbox []struct {
		Kind, ID, Cue, Text string
	} `json:"inbox"`
}

// TestMCPDrive: the Go SDK's client drives orch through orch mcp on stdio.
func TestMCPDrive(t *testing.T) {
	dir := writeFiles(t, driveSpecs)
	driveSession(t, mcpSession(t, dir, nil))
}

// TestMCPDriveHTTP: the Go SDK's client drives orch through orch serve's
// /mcp, with the token orch serve printed; without it, or for a foreign
// host, the server refuses the client (401, 403).
func TestMCPDriveHTTP(t *testing.T) {
	dir := writeFiles(t, driveSpecs)
	db := filepath.Join(dir, ".orch", "orch.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	p := startServeIn(t, dir, db)
	connect := func(token, host string) (*mcp.ClientSession, error) {
		rt := http.DefaultTransport
		if token != "" {
			rt = mcpbridge.Bearer(token, rt)
		}
		if host != "" {
			rt = hostAs{host, rt}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.base + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: rt}}, nil)
	}
	if _, err := connect("", ""); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("/mcp without the token: %v, want 401", err)
	}
	if _, err := connect(p.token, "evil.example"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("/mcp for a foreign host: %v, want 403", err)
	}
	cs, err := connect(p.token, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	driveSession(t, cs)
}

// hostAs sends every request for another Host (DNS rebinding).
type hostAs struct {
	host string
	rt   http.RoundTripper
}

func (h hostAs) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	return h.rt.RoundTrip(r)
}

// driveSession drives orch through cs as a coding agent would: the tools
// listed with their annotations, a broken spec's diagnostics, a plan, a
// run started in the background, wait returning on its question, the
// answer, wait on the manual cue, GO, wait to the end, then what the run
// recorded (status, events, logs, the blackboard).
func driveSession(t *testing.T, cs *mcp.ClientSession) {
	ctx := context.Background()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		a := tl.Annotations
		reads := slices.Contains([]string{"validate", "plan", "schema", "status", "events", "logs", "blackboard_get", "wait"}, tl.Name)
		if a == nil || a.ReadOnlyHint != reads {
			t.Errorf("tool %s: annotations %+v, want readOnlyHint %v", tl.Name, a, reads)
		}
		if a != nil && !reads && (a.DestructiveHint == nil || *a.DestructiveHint != (tl.Name == "stop")) {
			t.Errorf("tool %s: destructiveHint %v, want %v", tl.Name, a.DestructiveHint, tl.Name == "stop")
		}
	}
	want := slices.Sorted(slices.Values(driveTools)) // tools/list gives them by name
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, driveTools)
	}

	// A broken spec: diagnostics a model can fix it from.
	var diags struct {
		Valid       bool `json:"valid"`
		Diagnostics []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Column  int    `json:"column"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"diagnostics"`
	}
	okTool(t, cs, "validate", map[string]any{"paths": []string{"broken"}}, &diags)
	if diags.Valid || len(diags.Diagnostics) == 0 {
		t.Fatalf("validate broken: %+v, want invalid with diagnostics", diags)
	}
	d := diags.Diagnostics[0]
	if !strings.HasSuffix(d.File, filepath.Join("broken", "cuelist.yaml")) || d.Line != 4 || d.Column == 0 || d.Code == "" || !strings.Contains(d.Message, "nobody") {
		t.Errorf("diagnostic %+v: want broken/cuelist.yaml:4 naming the unknown agent", d)
	}
	okTool(t, cs, "validate", map[string]any{"paths": []string{"specs"}}, &diags)
	if !diags.Valid {
		t.Fatalf("validate specs: %+v", diags)
	}

	var plan struct {
		Cuelist string     `json:"cuelist"`
		Waves   [][]string `json:"waves"`
		Mermaid string     `json:"mermaid"`
	}
	okTool(t, cs, "plan", map[string]any{"cuelist": "specs/cuelist.yaml", "inputs": map[string]any{"target": "prod"}}, &plan)
	if plan.Cuelist != "ship" || len(plan.Waves) != 2 || !strings.HasPrefix(plan.Mermaid, "flowchart TD") {
		t.Errorf("plan: %+v", plan)
	}
	var schema map[string]any
	okTool(t, cs, "schema", map[string]any{"kind": "cuelist"}, &schema)
	if schema["$schema"] == nil || schema["properties"] == nil {
		t.Errorf("schema cuelist: %v", schema)
	}

	// A run, started in the background: its id at once.
	var started struct {
		Run string `json:"run"`
		PID int    `json:"pid"`
		Log string `json:"log"`
	}
	okTool(t, cs, "run", map[string]any{"cuelist": "specs/cuelist.yaml", "inputs": map[string]any{"target": "prod"}}, &started)
	if len(started.Run) != 12 || started.PID <= 0 {
		t.Fatalf("run: %+v", started)
	}
	run := started.Run

	var w waited
	okTool(t, cs, "wait", map[string]any{"run": run, "until": "question", "timeout_seconds": 30}, &w)
	if w.Why != "question" || len(w.Inbox) != 1 || w.Inbox[0].Kind != "question" || w.Inbox[0].Text != "Ship it?" {
		t.Fatalf("wait for the question: %+v (the run's log: %s)", w, started.Log)
	}
	var answered struct {
		Delivered bool   `json:"delivered"`
		Message   string `json:"message"`
	}
	okTool(t, cs, "answer", map[string]any{"run": run, "question": w.Inbox[0].ID, "answer": "yes"}, &answered)
	if answered.Message == "" {
		t.Errorf("answer: %+v", answered)
	}
	okTool(t, cs, "wait", map[string]any{"run": run, "until": "go", "timeout_seconds": 30}, &w)
	if w.Why != "go" || len(w.Inbox) != 1 || w.Inbox[0].Cue != "DEPLOY" {
		t.Fatalf("wait for GO: %+v", w)
	}
	// Wait until the run paused (it has nothing else to do), so that the GO
	// continues it in the background.
	okTool(t, cs, "wait", map[string]any{"run": run, "until": "end", "timeout_seconds": 30}, &w)
	if w.State != "paused" {
		t.Fatalf("the run before GO: %+v, want paused", w)
	}
	var written struct {
		Key     string `json:"key"`
		Version int64  `json:"version"`
	}
	okTool(t, cs, "blackboard_set", map[string]any{"run": run, "key": "plan", "value": map[string]any{"steps": 3}}, &written)
	if written.Version != 1 {
		t.Errorf("blackboard_set: %+v", written)
	}
	var entry struct {
		Key     string          `json:"key"`
		Value   json.RawMessage `json:"value"`
		Version int64           `json:"version"`
	}
	okTool(t, cs, "blackboard_get", map[string]any{"run": run, "key": "plan"}, &entry)
	if string(entry.Value) != `{"steps":3}` || entry.Version != 1 {
		t.Errorf("blackboard_get: %+v", entry)
	}
	if msg := errTool(t, cs, "blackboard_set", map[string]any{"run": run, "key": "plan", "value": 4, "expected_version": 0}); !strings.Contains(msg, "version") {
		t.Errorf("a conditional write on a stale version: %s", msg)
	}
	var gone struct {
		Message string `json:"message"`
	}
	okTool(t, cs, "go", map[string]any{"run": run, "cue": "DEPLOY"}, &gone)
	deadline := time.Now().Add(time.Minute)
	for w.State != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not complete after GO: %+v", w)
		}
		okTool(t, cs, "wait", map[string]any{"run": run, "until": "end", "timeout_seconds": 5}, &w)
	}

	var st struct {
		ID     string         `json:"id"`
		State  string         `json:"state"`
		Inputs map[string]any `json:"inputs"`
		Cues   []struct {
			ID      string         `json:"id"`
			State   string         `json:"state"`
			Outputs map[string]any `json:"outputs"`
		} `json:"cues"`
	}
	okTool(t, cs, "status", map[string]any{"run": run}, &st)
	if st.ID != run || st.State != "completed" || st.Inputs["target"] != "prod" || len(st.Cues) != 2 || st.Cues[0].Outputs["answer"] != "yes" {
		t.Errorf("status: %+v", st)
	}
	var runs struct {
		Runs []struct{ ID, State string } `json:"runs"`
	}
	okTool(t, cs, "status", map[string]any{}, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].ID != run {
		t.Errorf("status (the runs): %+v", runs)
	}
	var logs struct {
		Lines []struct{ Cue, Line string } `json:"lines"`
	}
	okTool(t, cs, "logs", map[string]any{"run": run, "cue": "DEPLOY"}, &logs)
	if len(logs.Lines) != 1 || logs.Lines[0].Line != "deployed" {
		t.Errorf("logs of DEPLOY: %+v", logs)
	}
	okTool(t, cs, "logs", map[string]any{"run": run, "tail": 1}, &logs)
	if len(logs.Lines) == 0 || logs.Lines[len(logs.Lines)-1].Line != "deployed" {
		t.Errorf("logs tail 1: %+v", logs)
	}
	var events struct {
		Events []struct {
			Seq  int64  `json:"seq"`
			Type string `json:"type"`
		} `json:"events"`
		More bool `json:"more"`
	}
	okTool(t, cs, "events", map[string]any{"run": run}, &events)
	if len(events.Events) < 5 || events.Events[0].Type != "run/started" || events.More {
		t.Fatalf("events: %+v", events)
	}
	last := events.Events[len(events.Events)-1].Seq
	okTool(t, cs, "events", map[string]any{"run": run, "after": last}, &events)
	if len(events.Events) != 0 {
		t.Errorf("events after the last: %+v", events)
	}

	if msg := errTool(t, cs, "blackboard_set", map[string]any{"run": run, "key": "plan", "value": 4}); !strings.Contains(msg, "cannot be written") {
		t.Errorf("a write on a completed run: %s", msg)
	}
}
