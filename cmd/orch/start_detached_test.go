//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

// TestStartDetached: control starts a run in a detached orch (what an MCP
// tool does: it must not run agents in its own process) after the checks
// orch run makes first, names it before it starts, and the run completes
// there with its inputs; an input the cuelist does not declare starts
// nothing.
func TestStartDetached(t *testing.T) {
	dir := writeFiles(t, map[string]string{"cuelist.yaml": `cuelist:
  id: bg
  inputs: {word: none}
  cues:
    - {id: SAY, agents: [say]}
---
agent: {id: say, command: [sh, -c, 'echo said']}
`})
	db := filepath.Join(dir, ".orch", "orch.db")
	ctx := context.Background()
	ctl := control.New(control.Config{DB: db})
	defer ctl.Close()
	compiled, err := control.Compile(filepath.Join(dir, "cuelist.yaml"), "", spec.LoadOptions{})
	if err != nil || compiled.Plan == nil {
		t.Fatalf("compile: %v %v", err, compiled.Diags)
	}
	if _, err := ctl.StartDetached(ctx, control.StartRequest{Compiled: compiled, Sets: []string{"nope=1"}}, control.Detach{Log: "mcp"}); control.KindOf(err) != control.Invalid ||
		!strings.Contains(err.Error(), `has no input "nope"`) {
		t.Fatalf("an undeclared input: %v, want Invalid", err)
	}
	started, err := ctl.StartDetached(ctx, control.StartRequest{Compiled: compiled, Sets: []string{"word=hello"}}, control.Detach{Log: "mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, ".orch", "mcp-"+started.Run+".log"); started.Log != want || started.PID <= 0 {
		t.Errorf("started: %+v, want its log at %s", started, want)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := ctl.Status(ctx, control.StatusRequest{Run: started.Run})
		if err == nil && st.State == "completed" {
			if in, _ := st.Inputs.(map[string]any); in["word"] != "hello" {
				t.Errorf("the run's inputs: %v, want word=hello", st.Inputs)
			}
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(started.Log)
			t.Fatalf("run %s did not complete in a minute: %v %+v\nits log:\n%s", started.Run, err, st, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	lines, err := ctl.Logs(ctx, control.LogsRequest{Run: started.Run})
	if err != nil || len(lines) != 1 || lines[0].Line != "said" {
		t.Errorf("the run's output: %+v (%v), want said", lines, err)
	}
	if _, err := ctl.StartDetached(ctx, control.StartRequest{Compiled: compiled, RunID: started.Run}, control.Detach{Log: "mcp"}); control.KindOf(err) != control.Invalid {
		t.Errorf("a second run with the id of the first: %v, want Invalid", err)
	}
}

// TestResumeDetached: a paused run whose manual cue was approved is
// resumed in a detached orch (control's Detach, as an MCP tool asks) and
// completes there; a completed run is not resumed.
func TestResumeDetached(t *testing.T) {
	dir := writeFiles(t, map[string]string{"cuelist.yaml": `cuelist:
  id: release
  cues:
    - {id: BUILD, agents: [ok]}
    - {id: DEPLOY, agents: [ok], dependencies: [BUILD], go: manual}
---
agent: {id: ok, command: ["true"]}
`})
	db := filepath.Join(dir, ".orch", "orch.db")
	if code, out, errOut := runOrch(t, dir, "--db", db, "run", "cuelist.yaml"); code != 3 {
		t.Fatalf("orch run: exit %d\n%s%s", code, out, errOut)
	}
	ctx := context.Background()
	ctl := control.New(control.Config{DB: db})
	defer ctl.Close()
	id, err := ctl.Resolve(ctx, "last")
	if err != nil {
		t.Fatal(err)
	}
	w, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Append(ctx, record.Event{RunID: id, Type: record.EvManualGo, Cue: "DEPLOY", Reason: "test"})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	res, err := ctl.Resume(ctx, control.ResumeRequest{Run: id, Detach: &control.Detach{Log: "mcp"}})
	if err != nil || res.Detached == nil || res.Execution != nil {
		t.Fatalf("resume: %+v %v", res, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := ctl.Status(ctx, control.StatusRequest{Run: id})
		if err == nil && st.State == "completed" {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(res.Detached.Log)
			t.Fatalf("run %s did not complete in a minute: %v\nits log:\n%s", id, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := ctl.Resume(ctx, control.ResumeRequest{Run: id, Detach: &control.Detach{Log: "mcp"}}); control.KindOf(err) != control.Invalid ||
		!strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("resume of a completed run: %v, want Invalid", err)
	}
}
