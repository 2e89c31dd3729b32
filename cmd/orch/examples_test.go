package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesValidate keeps the bundled examples valid: every example
// validates with no error and no warning, alone and all together.
func TestExamplesValidate(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{root}
	for _, e := range entries {
		if e.IsDir() {
			paths = append(paths, filepath.Join(root, e.Name()))
		}
	}
	if len(paths) < 4 {
		t.Fatalf("expected at least three examples, found %v", paths[1:])
	}
	for _, p := range paths {
		code, stdout, stderr := runOrch(t, "", "validate", "--strict", p)
		if code != exitOK {
			t.Errorf("orch validate --strict %s: exit %d\n%s%s", p, code, stdout, stderr)
		}
	}
}
