//go:build unix

package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpErrorSpecs: a cue that runs until stopped, and one that fails.
var mcpErrorSpecs = map[string]string{
	"long.yaml": `cuelist:
  id: long
  inputs: {n: 1}
  cues:
    - {id: SLEEP, agents: [sleeper]}
---
agent: {id: sleeper, command: [sleep, "30"]}
`,
	"broken.yaml": `cuelist:
  id: broken
  cues:
    - {id: A, agents: [nobody]}
`,
}

// TestMCPErrors: what a tool refuses is a tool error (isError) with the
// message the command prints, and a bad argument names its field; stop,
// retry, resume and ack act on a run as their commands do.
func TestMCPErrors(t *testing.T) {
	dir := writeFiles(t, mcpErrorSpecs)
	cs := mcpSession(t, dir, nil)

	// Arguments: a missing one, one outside the project, a kind not offered,
	// an input the cuelist does not declare or cannot take.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"events", map[string]any{}, `"run"`},
		{"validate", map[string]any{"paths": []string{"../elsewhere"}}, `paths[0]: "../elsewhere" is outside the project root`},
		{"validate", map[string]any{"paths": []string{}}, "paths: give at least one"},
		{"schema", map[string]any{"kind": "nope"}, "kind"},
		{"plan", map[string]any{"cuelist": "broken.yaml"}, `broken.yaml:4:`},
		{"plan", map[string]any{"cuelist": "long.yaml", "inputs": map[string]any{"m": 2}}, `inputs: --set m=2: cuelist long has no input "m"`},
		{"run", map[string]any{"cuelist": "long.yaml", "inputs": map[string]any{"n": []int{1}}}, "inputs.n: want a string, a number or a boolean"},
		{"run", map[string]any{"cuelist": "long.yaml", "engine": "temporal"}, "engine: temporal runs are not started from orch mcp"},
		{"run", map[string]any{"cuelist": "long.yaml", "engine": "mars"}, "engine"},
		{"wait", map[string]any{"run": "x", "until": "later"}, "until"},
	} {
		if msg := errTool(t, cs, c.tool, c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%s %v: %q, want it to say %q", c.tool, c.args, msg, c.want)
		}
	}

	// No run yet: orch mcp uses the project's database (the one its run
	// tool creates), and says where it is not.
	if msg := errTool(t, cs, "status", map[string]any{"run": "nope"}); !strings.HasPrefix(msg, "no runs yet: the run database "+dir) {
		t.Errorf("status of no run: %q", msg)
	}

	var started struct {
		Run string `json:"run"`
	}
	okTool(t, cs, "run", map[string]any{"cuelist": "long.yaml", "inputs": map[string]any{"n": 2}}, &started)
	run := started.Run
	var w waited
	okTool(t, cs, "wait", map[string]any{"run": run, "until": "question", "timeout_seconds": 1}, &w)
	if w.Why != "timeout" || w.State != "running" {
		t.Errorf("wait for a question that does not come: %+v, want why timeout, running", w)
	}

	// Messages as the commands print them.
	for _, c := range []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"answer", map[string]any{"run": run, "question": "q9", "answer": "x"}, []string{"answer", run, "q9", "x"}},
		{"ack", map[string]any{"run": run, "id": "e9"}, []string{"ack", run, "e9"}},
		{"go", map[string]any{"run": run, "cue": "NOPE"}, []string{"go", run, "NOPE"}},
		{"logs", map[string]any{"run": run, "cue": "NOPE"}, []string{"logs", run, "NOPE"}},
		{"blackboard_get", map[string]any{"run": run, "key": "none"}, []string{"bb", "get", "--run", run, "none"}},
		{"retry", map[string]any{"run": run}, []string{"retry", run}},
		{"resume", map[string]any{"run": run}, []string{"resume", run}},
	} {
		_, _, cliErr := runOrch(t, dir, c.cli...)
		want := strings.TrimSpace(strings.TrimPrefix(cliErr, "orch: "))
		msg := errTool(t, cs, c.tool, c.args)
		if c.tool == "logs" {
			want = "cue: " + want // the argument named
		}
		if msg != want {
			t.Errorf("%s %v: %q, want %q (orch %s)", c.tool, c.args, msg, want, strings.Join(c.cli, " "))
		}
	}

	// stop, resume it in the background, stop it again, retry it in the
	// background, and stop one cue: the run is over.
	var stopped struct {
		State   string `json:"state"`
		Message string `json:"message"`
	}
	okTool(t, cs, "stop", map[string]any{"run": run}, &stopped)
	if stopped.State != "stopped" || stopped.Message == "" {
		t.Fatalf("stop: %+v", stopped)
	}
	running := func(what string) {
		t.Helper()
		var st struct{ State string }
		for deadline := time.Now().Add(30 * time.Second); st.State != "running"; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after %s the run is %q, want running", what, st.State)
			}
			okTool(t, cs, "status", map[string]any{"run": run}, &st)
		}
	}
	var resumed struct {
		Run      string `json:"run"`
		Detached struct {
			PID int `json:"pid"`
		} `json:"detached"`
	}
	okTool(t, cs, "resume", map[string]any{"run": run}, &resumed)
	if resumed.Run != run || resumed.Detached.PID <= 0 {
		t.Fatalf("resume: %+v", resumed)
	}
	running("resume")
	okTool(t, cs, "stop", map[string]any{"run": run}, &stopped)
	if stopped.State != "stopped" {
		t.Fatalf("stop after resume: %+v", stopped)
	}
	var retried struct {
		Plan     map[string]any `json:"plan"`
		Detached struct {
			PID int `json:"pid"`
		} `json:"detached"`
	}
	okTool(t, cs, "retry", map[string]any{"run": run}, &retried)
	if retried.Detached.PID <= 0 || retried.Plan == nil {
		t.Fatalf("retry: %+v", retried)
	}
	running("retry")
	okTool(t, cs, "stop", map[string]any{"run": run, "cue": "SLEEP"}, &stopped)
	okTool(t, cs, "wait", map[string]any{"run": run, "until": "end", "timeout_seconds": 30}, &w)
	if w.Why != "end" || w.State != "failed" {
		t.Fatalf("wait for the end after stopping its one cue: %+v, want it failed", w)
	}
}

// TestMCPResources: the runs and the schemas as resources; a client
// subscribed to a run hears that it changed (it was stopped) and reads its
// new status.
func TestMCPResources(t *testing.T) {
	dir := writeFiles(t, mcpErrorSpecs)
	updated := make(chan string, 16)
	cs := mcpSession(t, dir, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		updated <- r.Params.URI
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	if want := []string{"orch://runs", "orch://schemas/agent", "orch://schemas/cuelist", "orch://schemas/message"}; !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 2 {
		t.Fatalf("templates: %v %v", templates, err)
	}
	read := func(uri string) string {
		t.Helper()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		return res.Contents[0].Text
	}
	if got := read("orch://runs"); got != "[]" {
		t.Errorf("orch://runs with no database: %s", got)
	}
	if got := read("orch://schemas/cuelist"); !strings.Contains(got, `"$schema"`) {
		t.Errorf("orch://schemas/cuelist: %.200s", got)
	}
	var started struct {
		Run string `json:"run"`
	}
	okTool(t, cs, "run", map[string]any{"cuelist": "long.yaml"}, &started)
	uri := "orch://runs/" + started.Run
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "orch://runs/feedfeedfeed"}); err == nil || !strings.Contains(err.Error(), "feedfeedfeed") {
		t.Errorf("a run that is not there: %v", err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	var stopped struct{ State string }
	okTool(t, cs, "stop", map[string]any{"run": started.Run}, &stopped)
	for {
		select {
		case got := <-updated:
			if got != uri {
				t.Fatalf("updated %s, want %s", got, uri)
			}
		case <-ctx.Done():
			t.Fatalf("no notification that %s changed", uri)
		}
		var st struct{ State string }
		if err := json.Unmarshal([]byte(read(uri)), &st); err != nil {
			t.Fatal(err)
		}
		if st.State == "stopped" {
			break
		}
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
}

// TestMCPUsage: orch mcp takes no argument, and a --root that is not a
// directory is a usage error, before any protocol is spoken.
func TestMCPUsage(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runOrch(t, dir, "mcp", "--root", filepath.Join(dir, "nope")); code != 2 || !strings.Contains(stderr, "not a directory") {
		t.Errorf("orch mcp --root nope: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runOrch(t, dir, "mcp", "extra"); code != 2 {
		t.Errorf("orch mcp extra: exit %d, %s", code, stderr)
	}
}
