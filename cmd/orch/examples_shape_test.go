//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// checkExampleShape compares the shape of an example's finished run with
// testdata/examples/NAME.shape: the run's state, whether it has a result
// branch, each cue's and task's state, kind and output keys with the type
// of their values, the questions and how they closed, and the blackboard's
// keys. Values that differ from run to run (times, ids, commits, text) are
// left out; a change of what an example does shows here. Rewrite with:
// go test ./cmd/orch -run TestExamplesRun -update
func checkExampleShape(t *testing.T, name, db string) {
	t.Helper()
	code, stdout, stderr := runOrch(t, "", "status", "--db", db, "last", "--output", "json")
	if code != exitOK {
		t.Fatalf("orch status: exit %d\n%s%s", code, stdout, stderr)
	}
	var run struct {
		State  string `json:"state"`
		Result any    `json:"result"`
		Cues   []struct {
			ID      string         `json:"id"`
			State   string         `json:"state"`
			Kind    string         `json:"kind"`
			Agents  []string       `json:"agents"`
			Outputs map[string]any `json:"outputs"`
		} `json:"cues"`
		Questions []struct {
			ID    string `json:"id"`
			To    string `json:"to"`
			State string `json:"state"`
			By    string `json:"by"`
		} `json:"questions"`
	}
	if err := json.Unmarshal([]byte(stdout), &run); err != nil {
		t.Fatalf("orch status --output json: %v\n%s", err, stdout)
	}
	var lines []string
	lines = append(lines, "run "+run.State)
	if run.Result != nil {
		lines = append(lines, "result branch")
	}
	var cues []string
	for _, c := range run.Cues {
		line := fmt.Sprintf("cue %s %s", c.ID, c.State)
		if c.Kind != "" {
			line += " (" + c.Kind + ")"
		}
		line += " by " + strings.Join(c.Agents, ",")
		if len(c.Outputs) > 0 {
			var outs []string
			for k, v := range c.Outputs {
				outs = append(outs, k+"="+jsonKind(v))
			}
			sort.Strings(outs)
			line += ": " + strings.Join(outs, " ")
		}
		cues = append(cues, line)
	}
	sort.Strings(cues)
	lines = append(lines, cues...)
	for _, q := range run.Questions {
		lines = append(lines, fmt.Sprintf("question %s to %s %s by %s", q.ID, q.To, q.State, q.By))
	}
	code, stdout, stderr = runOrch(t, "", "bb", "ls", "--db", db, "--run", "last", "--output", "json")
	if code != exitOK {
		t.Fatalf("orch bb ls: exit %d\n%s%s", code, stdout, stderr)
	}
	var board []struct {
		Key    string `json:"key"`
		Author string `json:"author"`
		Value  any    `json:"value"`
	}
	if err := json.Unmarshal([]byte(stdout), &board); err != nil {
		t.Fatalf("orch bb ls --output json: %v\n%s", err, stdout)
	}
	var keys []string
	for _, e := range board {
		keys = append(keys, fmt.Sprintf("blackboard %s=%s by %s", e.Key, jsonKind(e.Value), e.Author))
	}
	sort.Strings(keys)
	lines = append(lines, keys...)
	got := strings.Join(lines, "\n") + "\n"

	path := filepath.Join("testdata", "examples", name+".shape")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with go test ./cmd/orch -run TestExamplesRun -update)", err)
	}
	if got != string(want) {
		t.Errorf("the run of examples/%s has another shape than %s:\ngot:\n%swant:\n%s", name, path, got, want)
	}
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		if len(x) == 0 {
			return "list"
		}
		return "list(" + jsonKind(x[0]) + ")"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// TestGoAgentExample runs protocols/agent/example, the Go agent the docs
// show, through orch run as a protocol: jsonl agent, and checks its
// greeting: the example outside examples/ is run too.
func TestGoAgentExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "greeter")
	build := exec.Command("go", "build", "-o", bin, "./protocols/agent/example")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./protocols/agent/example: %v\n%s", err, out)
	}
	cuelist := filepath.Join(dir, "cuelist.yaml")
	spec := "agent:\n  id: go-greeter\n  protocol: jsonl\n  command: [" + bin + "]\n  requires: [name]\n  provides: [greeting]\n---\n" +
		"cuelist:\n  id: go-agent\n  inputs: {name: Ada}\n  cues:\n    - id: GREET\n      agents: [go-greeter]\n"
	if err := os.WriteFile(cuelist, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "orch.db")
	if code, stdout, stderr := runOrch(t, "", "run", "--db", db, cuelist); code != exitOK {
		t.Fatalf("orch run: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := runOrch(t, "", "status", "--db", db, "last", "--output", "json")
	if code != exitOK {
		t.Fatalf("orch status: exit %d\n%s%s", code, stdout, stderr)
	}
	var run struct {
		Cues []struct {
			Outputs map[string]any `json:"outputs"`
		} `json:"cues"`
	}
	if err := json.Unmarshal([]byte(stdout), &run); err != nil || len(run.Cues) != 1 {
		t.Fatalf("orch status --output json: %v\n%s", err, stdout)
	}
	if got := run.Cues[0].Outputs["greeting"]; got != "hello Ada" {
		t.Errorf("the Go example agent's greeting = %v, want \"hello Ada\"", got)
	}
}
