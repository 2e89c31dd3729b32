package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadPathsAndIncludes(t *testing.T) {
	tree(t, map[string]string{
		"specs/cuelist.yaml":     "cuelist:\n  id: c\n  include: [agents/*.yaml, more]\n  cues:\n    - {id: A, agents: [a1]}\n",
		"specs/agents/a1.yaml":   "agent: {id: a1, command: [x]}\n",
		"specs/agents/a2.yml":    "agent: {id: a2, command: [x]}\n---\nagent: {id: a3, command: [x]}\n",
		"specs/more/deep/b.yaml": "agent: {id: b, command: [x]}\n",
		"specs/.hidden/h.yaml":   "not: [valid\n",
		"specs/notes.txt":        "ignored",
	})
	tests := []struct {
		name  string
		paths []string
		files []string
	}{
		{"directory", []string{"specs"}, []string{"specs/agents/a1.yaml", "specs/agents/a2.yml", "specs/cuelist.yaml", "specs/more/deep/b.yaml"}},
		{"includes follow the cuelist", []string{"specs/cuelist.yaml"}, []string{"specs/cuelist.yaml", "specs/agents/a1.yaml", "specs/more/deep/b.yaml"}},
		{"given and included load once", []string{"specs/agents/a1.yaml", "specs/cuelist.yaml", "./specs/agents/a1.yaml"}, []string{"specs/agents/a1.yaml", "specs/cuelist.yaml", "specs/more/deep/b.yaml"}},
		{"glob", []string{"specs/agents/*"}, []string{"specs/agents/a1.yaml", "specs/agents/a2.yml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, diags, err := Load(tt.paths, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(diags) != 0 {
				t.Errorf("unexpected diagnostics: %v", diags)
			}
			var names []string
			for _, f := range set.Files {
				names = append(names, filepath.ToSlash(f.Name))
			}
			if strings.Join(names, " ") != strings.Join(tt.files, " ") {
				t.Errorf("files %v, want %v", names, tt.files)
			}
		})
	}
}

func TestLoadPathErrors(t *testing.T) {
	tree(t, map[string]string{"empty/x.txt": "", "fifo-dir/ok.yaml": "agent: {id: x, command: [y]}\n"})
	for _, p := range []string{"missing.yaml", "empty", "nothing*.yaml"} {
		_, _, err := Load([]string{p}, LoadOptions{})
		var pe *PathError
		if !errors.As(err, &pe) {
			t.Errorf("Load(%q) error = %v, want a PathError", p, err)
		}
	}
}

func TestDocumentKinds(t *testing.T) {
	tree(t, map[string]string{"multi.yaml": `agent: {id: a, command: [x]}
---
# a comment-only document is empty and skipped
---
cuelist: {id: c, cues: [{id: X, agents: [a]}]}
---
message_type: task.handoff
from_agent: a
to_agent: a
task_id: T
handoff_context: {}
---
message_type: status.usage
credits: 3
`})
	set, diags := validate(t, "multi.yaml")
	expectDiags(t, diags, `multi.yaml:9:11: error: agent "a" may not hand off to "a": not in its handoff_to (it lists none) [handoff-not-allowed]`)
	if len(set.Agents) != 1 || len(set.Cuelists) != 1 || len(set.Handoffs) != 1 || len(set.Messages) != 1 {
		t.Errorf("kinds: %d agents, %d cuelists, %d handoffs, %d messages", len(set.Agents), len(set.Cuelists), len(set.Handoffs), len(set.Messages))
	}
	if got := set.Files[0].Docs[2].Index; got != 3 {
		t.Errorf("handoff document index %d, want 3 (its place in the stream)", got)
	}
}

func TestPositions(t *testing.T) {
	tree(t, map[string]string{"p.yaml": `base: &base
  command: [x]
  priority: 1
agent:
  <<: *base
  id: a
  env:
    "we/ird~key": 1
  requires: [one, two]
`})
	set, diags, err := Load([]string{"p.yaml"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// base is an unknown field beside the kind key; the env key is not a valid name.
	if len(diags) != 2 || diags.Sorted()[0].Code != "unknown-field" {
		t.Fatalf("diags = %v", diags)
	}
	doc := set.Files[0].Docs[0]
	for _, tt := range []struct {
		ptr       string
		key       bool
		line, col int
	}{
		{"", false, 1, 1},
		{"/agent/id", false, 6, 7},
		{"/agent/id", true, 6, 3},
		{"/agent/requires/1", false, 9, 19},
		{"/agent/env/we~1ird~0key", true, 8, 5},
		{"/agent/priority", false, 3, 13}, // through the merge key
		{"/agent/nope/deeper", false, 5, 3},
	} {
		pos := doc.Pos(tt.ptr)
		if tt.key {
			pos = doc.KeyPos(tt.ptr)
		}
		if pos.Line != tt.line || pos.Col != tt.col {
			t.Errorf("%s (key %v) at %d:%d, want %d:%d", tt.ptr, tt.key, pos.Line, pos.Col, tt.line, tt.col)
		}
	}
	a := set.Agents[0]
	if a.Priority != 1 || len(a.Command) != 1 {
		t.Errorf("merge key not applied: %+v", a)
	}
}

func TestConverterValues(t *testing.T) {
	tree(t, map[string]string{"v.yaml": `agent:
  id: v
  command: [x, "007", 0x1F, 1_000, 2.5, 2024-01-02, yes, ~]
`})
	set, diags, _ := Load([]string{"v.yaml"}, LoadOptions{})
	doc := set.Files[0].Docs[0]
	cmd := (&converter{file: "v.yaml", diags: &Diagnostics{}}).convert(doc.Root, 0).(map[string]any)["agent"].(map[string]any)["command"].([]any)
	want := []any{"x", "007", int64(31), int64(1000), 2.5, "2024-01-02", "yes", nil}
	for i := range want {
		if cmd[i] != want[i] {
			t.Errorf("command[%d] = %#v, want %#v", i, cmd[i], want[i])
		}
	}
	// Non-strings in an argv are schema errors, at each item.
	if len(diags) != 4 {
		t.Errorf("want 4 wrong-type diagnostics, got %v", diags)
	}
}

func TestFileSizeCap(t *testing.T) {
	tree(t, map[string]string{"big.yaml": "agent: {id: big, command: [x]}\n" + strings.Repeat("# pad\n", 200)})
	_, diags, _ := Load([]string{"big.yaml"}, LoadOptions{MaxFileSize: 100})
	if len(diags) != 1 || diags[0].Code != "file-too-large" {
		t.Errorf("diags = %v", diags)
	}
	_, diags, _ = Load([]string{"big.yaml"}, LoadOptions{MaxFileSize: 10000})
	if len(diags) != 0 {
		t.Errorf("diags = %v", diags)
	}
}

func TestUnreadableInclude(t *testing.T) {
	dir := tree(t, map[string]string{
		"c.yaml":        "cuelist:\n  id: c\n  include: [secret.yaml]\n  cues: [{id: A, agents: [a]}]\n",
		"secret.yaml":   "agent: {id: a, command: [x]}\n",
		"agents/a.yaml": "",
	})
	if os.Getuid() == 0 {
		t.Skip("root can read anything")
	}
	_ = os.Chmod(filepath.Join(dir, "secret.yaml"), 0)
	_, diags, err := Load([]string{"c.yaml"}, LoadOptions{})
	if err != nil || len(diags) != 1 || diags[0].Code != "unreadable-include" {
		t.Errorf("err %v, diags %v", err, diags)
	}
}
