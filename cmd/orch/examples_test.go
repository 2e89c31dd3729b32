//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/store"
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
		if yamls, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.yaml")); e.IsDir() && len(yamls) > 0 {
			paths = append(paths, filepath.Join(root, e.Name())) // not lib/: code, no specs
		}
	}
	if len(paths) < 4 {
		t.Fatalf("expected at least three examples, found %v", paths[1:])
	}
	// examples/team/cuelist.real.yaml runs Claude Code and Codex, which
	// validate looks up in PATH (a warning where they are not installed):
	// stand-ins for them here.
	stubs := t.TempDir()
	for _, name := range []string{"claude", "codex"} {
		if err := os.WriteFile(filepath.Join(stubs, name), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", stubs+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, p := range paths {
		code, stdout, stderr := runOrch(t, "", "validate", "--strict", p)
		if code != exitOK {
			t.Errorf("orch validate --strict %s: exit %d\n%s%s", p, code, stdout, stderr)
		}
	}
}

// TestExamplesRun runs every example to completion through orch run, in a
// fresh database; a manual cue pauses the run (exit 3) and orch go continues
// it. An example that does not complete fails the test with its output, and
// the shape of its run is checked (checkExampleShape).
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
			if dir := filepath.Dir(cuelist); needsRepository(t, dir) {
				// Its worktrees and branches go in a repository of the
				// test's own, like a fresh clone's examples/ (lib/ too).
				copyRoot := t.TempDir()
				copyTree(t, root, filepath.Join(copyRoot, "examples"))
				gitRepository(t, copyRoot)
				cuelist = filepath.Join(copyRoot, "examples", e.Name(), "cuelist.yaml")
			}
			db := filepath.Join(t.TempDir(), "orch.db")
			stopAnswering := answerQuestions(t, db, "0")
			code, stdout, stderr := runOrch(t, "", "run", "--db", db, cuelist)
			stopAnswering()
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
			checkExampleShape(t, e.Name(), db)
		})
	}
}

// answerQuestions plays the person for an example run: every question that
// reaches the person gets answer, through orch answer, as someone at another
// shell would. The returned func stops it.
func answerQuestions(t *testing.T, db, answer string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		answered := map[string]bool{}
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			d, err := store.Open(db, store.Options{})
			if err != nil {
				continue // not created yet
			}
			var detail *store.RunDetail
			id, err := d.ResolveRun(context.Background(), "last")
			if err == nil {
				detail, err = d.Run(context.Background(), id)
			}
			d.Close()
			if err != nil {
				continue
			}
			for _, q := range detail.Questions {
				if q.State == "open" && q.To == "person" && !answered[q.ID] {
					answered[q.ID] = true
					var out, errb bytes.Buffer
					if code := run([]string{"answer", "--db", db, detail.ID, q.ID, answer}, &streams{in: bytes.NewReader(nil), out: &out, err: &errb}); code != exitOK {
						t.Errorf("orch answer %s %s: exit %d\n%s%s", detail.ID, q.ID, code, out.String(), errb.String())
					}
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// TestRunJSONStreamInOrder: orch run --output json streams a run's events in
// the order they were recorded (seq 1, 2, 3, ... with no gap), although the
// loop's decisions and the agents' own events (messages, blackboard writes,
// child tasks) are recorded from different goroutines.
func TestRunJSONStreamInOrder(t *testing.T) {
	for _, name := range []string{"protocol", "blackboard", "spawn"} {
		t.Run(name, func(t *testing.T) {
			cuelist, err := filepath.Abs(filepath.Join("..", "..", "examples", name, "cuelist.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(t.TempDir(), "orch.db")
			stopAnswering := answerQuestions(t, db, "0")
			code, stdout, stderr := runOrch(t, "", "run", "--db", db, "--output", "json", cuelist)
			stopAnswering()
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			for i, line := range lines {
				var e struct {
					Seq  int64  `json:"seq"`
					Type string `json:"type"`
				}
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("line %d is not an event: %v\n%s", i+1, err, line)
				}
				if e.Seq != int64(i+1) {
					t.Fatalf("event %d of the stream has seq %d (%s): not in recorded order\n%s", i+1, e.Seq, e.Type, stdout)
				}
			}
			if len(lines) < 10 {
				t.Fatalf("only %d events streamed:\n%s", len(lines), stdout)
			}
		})
	}
}
