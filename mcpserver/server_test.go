package mcpserver

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/control"
)

// TestInside: a tool's path is the project's, or refused naming its field.
func TestInside(t *testing.T) {
	root := t.TempDir()
	s, err := New(Options{Control: control.New(control.Config{DB: filepath.Join(root, "orch.db")}), Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct{ path, want, err string }{
		{"specs/a.yaml", filepath.Join(root, "specs", "a.yaml"), ""},
		{filepath.Join(root, "b.yaml"), filepath.Join(root, "b.yaml"), ""},
		{"specs/../../x.yaml", "", `cuelist: "specs/../../x.yaml" is outside the project root`},
		{filepath.Join(filepath.Dir(root), "x.yaml"), "", "outside the project root"},
		{"  ", "", "cuelist: give a path"},
	} {
		got, err := s.inside("cuelist", c.path)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("inside(%q): %q %v, want an error saying %q", c.path, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("inside(%q): %q %v, want %q", c.path, got, err, c.want)
		}
	}
}

// TestInputSets: a tool's inputs become --set key=value, in key order; a
// value that is no scalar names its input.
func TestInputSets(t *testing.T) {
	sets, err := inputSets(map[string]any{"n": 2.0, "b": true, "s": "x y", "f": 0.5})
	if err != nil || strings.Join(sets, " ") != "b=true f=0.5 n=2 s=x y" {
		t.Errorf("inputSets: %v %v", sets, err)
	}
	if _, err := inputSets(map[string]any{"l": []any{1.0}}); err == nil || !strings.Contains(err.Error(), "inputs.l:") {
		t.Errorf("a list input: %v", err)
	}
}

// TestCatalog: the tools, each with a title and annotations.
func TestCatalog(t *testing.T) {
	want := "validate plan schema run status events logs answer go ack stop retry resume blackboard_get blackboard_set wait"
	if got := strings.Join(Names(), " "); got != want {
		t.Errorf("tools: %s, want %s", got, want)
	}
	for _, n := range Names() {
		if tl := Tool(n); tl.Annotations == nil || tl.Title == "" || tl.InputSchema == nil {
			t.Errorf("tool %s: %+v", n, tl)
		}
	}
}
