package main

import (
	"os"
	"path/filepath"
	"strings"
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

// TestExamplesRun runs every example to completion through orch run, in a
// fresh database; a manual cue pauses the run (exit 3) and orch go continues
// it. An example that does not complete fails the test with its output.
func TestExamplesRun(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		cuelist := filepath.Join(root, e.Name(), "cuelist.yaml")
		if _, err := os.Stat(cuelist); err != nil {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "orch.db")
			code, stdout, stderr := runOrch(t, "", "run", "--db", db, cuelist)
			for code == exitPaused {
				var cue string
				for _, line := range strings.Split(stdout, "\n") {
					if _, rest, ok := strings.Cut(line, "continue with: orch go "); ok {
						cue = strings.Fields(rest)[1]
					}
				}
				if cue == "" {
					t.Fatalf("paused without saying how to continue:\n%s", stdout)
				}
				code, stdout, stderr = runOrch(t, "", "go", "--db", db, "last", cue)
			}
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, " completed in ") {
				t.Errorf("no completed verdict:\n%s", stdout)
			}
		})
	}
}
