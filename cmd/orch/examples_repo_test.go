//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needsRepository says whether the example in dir has an agent with
// workspace: worktree: orch runs it only inside a git repository with a
// commit, which a test's copy of it is not.
func needsRepository(t *testing.T, dir string) bool {
	t.Helper()
	yamls, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	more, _ := filepath.Glob(filepath.Join(dir, "agents", "*.yaml"))
	for _, y := range append(yamls, more...) {
		data, err := os.ReadFile(y)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "workspace: worktree") {
			return true
		}
	}
	return false
}

// gitRepository makes dir a git repository holding what is in it, in one
// commit, as a fresh clone of orch's would be: the worktrees and branches of
// an example's run stay in the test's copy, never in orch's own repository.
func gitRepository(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "--quiet"},
		{"add", "--all"},
		{"-c", "user.name=orch test", "-c", "user.email=test@localhost", "-c", "commit.gpgsign=false",
			"commit", "--quiet", "--no-verify", "-m", "the examples"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
	}
}
