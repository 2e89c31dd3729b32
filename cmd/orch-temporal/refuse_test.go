package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// TestAnswerEmpty: an empty answer is refused (exit 2) before anything is
// sent.
func TestAnswerEmpty(t *testing.T) {
	var stderr bytes.Buffer
	code := execute([]string{"answer", "r1", "q1", "  "}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "the answer is empty") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// TestCrossRunCooldownRefused: an agent on a cooldown an earlier run
// recorded in the store refuses the run on Temporal (exit 2, naming the cue
// and the agent) before any workflow starts: the workflow keeps cooldowns
// within its run only.
func TestCrossRunCooldownRefused(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"c.yaml": "cuelist:\n  id: c\n  cues:\n    - id: BUILD\n      agents: [builder]\n",
		"builder.yaml": "agent:\n  id: builder\n  command: [\"true\"]\n  protocol: none\n  cooldown: 1h\n" +
			"  fallback: [spare]\n",
		"spare.yaml": "agent:\n  id: spare\n  command: [\"true\"]\n  protocol: none\n  cooldown: 1h\n",
	}
	files["c.yaml"] = "cuelist:\n  id: c\n  include: [builder.yaml, spare.yaml]\n  cues:\n    - id: BUILD\n      agents: [builder]\n"
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, dbFile := temporalStore(t, "earlier", "")
	if err := db.Append(context.Background(), record.Event{RunID: "earlier", Type: record.EvCooldown, Agent: "spare",
		Data: record.CooldownData{Until: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := execute([]string{"run", "--db", dbFile, "--root", root, "--temporal-address", "127.0.0.1:1", filepath.Join(root, "c.yaml")}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "cue BUILD: agent spare is on a cooldown an earlier run recorded, until ") ||
		!strings.Contains(stderr.String(), "--engine temporal keeps cooldowns within one run only") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// TestSignalFindsTheRecordedRun: orch-temporal go on a run recorded on
// Temporal finds its temporal block in the store (from run.started) and
// dials the recorded address; a run the store does not have is named.
func TestSignalFindsTheRecordedRun(t *testing.T) {
	_, dbFile := temporalStore(t, "r1", "tok")
	var stderr bytes.Buffer
	code := execute([]string{"go", "--db", dbFile, "r1", "A"}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "connecting to Temporal at 127.0.0.1:1 (namespace default)") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	code = execute([]string{"go", "--db", dbFile, "nosuch", "A"}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "nosuch") || strings.Contains(stderr.String(), "local engine") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// worktreeCuelist is a directory (outside any git repository, with no
// $ORCH_GIT_REMOTE) holding c.yaml, a cuelist of one worktree agent.
func worktreeCuelist(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(root))
	t.Setenv(GitRemoteEnv, "")
	files := map[string]string{
		"c.yaml":      "cuelist:\n  id: c\n  include: [writer.yaml]\n  cues:\n    - id: WRITE\n      agents: [writer]\n",
		"writer.yaml": "agent: {id: writer, run: \"echo a > a.txt\", workspace: worktree}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestWorktreeWithoutRemoteRefused: a cuelist with worktree agents is
// refused at submit (exit 2, before any workflow starts) without a git
// remote the workers share, and outside a git repository.
func TestWorktreeWithoutRemoteRefused(t *testing.T) {
	root := worktreeCuelist(t)
	_, dbFile := temporalStore(t, "earlier", "")
	var stderr bytes.Buffer
	code := execute([]string{"run", "--db", dbFile, "--root", root, "--temporal-address", "127.0.0.1:1", filepath.Join(root, "c.yaml")}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "agents with workspace: worktree: on --engine temporal their branches go from worker to worker through a git remote") ||
		!strings.Contains(stderr.String(), "--git-remote URL") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	code = execute([]string{"run", "--db", dbFile, "--root", root, "--git-remote", "/nowhere.git", "--temporal-address", "127.0.0.1:1", filepath.Join(root, "c.yaml")}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "is not in a git repository with a commit") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	stderr.Reset() // a remote with a token is taken (TestRemoteCredentialStripped), and never printed
	code = execute([]string{"run", "--db", dbFile, "--root", root, "--git-remote", "https://me:tok3n@example.com/p.git", "--temporal-address", "127.0.0.1:1", filepath.Join(root, "c.yaml")}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "is not in a git repository with a commit") || strings.Contains(stderr.String(), "tok3n") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
