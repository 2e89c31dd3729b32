package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/spec"
)

const tokenRemote = "https://x-access-token:ghs_FakeT0ken4242@git.example.invalid/org/repo.git"

func gitOK(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitwork.Git(context.Background(), dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@x", "-c", "init.defaultBranch=main"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRemoteCredentialStripped: orch-temporal run --git-remote with a
// token takes it (the run's history and store get the remote without it,
// the process's redactors learn it through $ORCH_GIT_REMOTE).
func TestRemoteCredentialStripped(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := worktreeCuelist(t)
	gitOK(t, root, "init", "--quiet")
	gitOK(t, root, "add", "--all")
	gitOK(t, root, "commit", "--quiet", "-m", "p")
	_, p, diags, err := planner.Compile(filepath.Join(root, "c.yaml"), "", spec.LoadOptions{Root: root})
	if err != nil || p == nil {
		t.Fatalf("%v %v", err, diags)
	}
	cmd := runCmd()
	if err := cmd.Flags().Set("git-remote", tokenRemote); err != nil {
		t.Fatal(err)
	}
	g, err := runGit(cmd, root, p)
	if err != nil {
		t.Fatal(err)
	}
	if g.Remote != "https://git.example.invalid/org/repo.git" {
		t.Errorf("the run's remote %q, want it without the token", g.Remote)
	}
	if got := redact.New(os.Environ(), nil).Text("to " + tokenRemote); strings.Contains(got, "ghs_FakeT0ken4242") {
		t.Errorf("a redactor of this process does not mask the token: %q", got)
	}
}

// TestFollowerFetchesWithItsOwnCredential: the follower fetches a run's
// branches from the recorded remote (without the token) with the token of
// its own $ORCH_GIT_REMOTE put back, and prints neither.
func TestFollowerFetchesWithItsOwnCredential(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", dir)
	bare, seed := filepath.Join(dir, "remote.git"), filepath.Join(dir, "seed")
	gitOK(t, dir, "init", "--quiet", "--bare", bare)
	gitOK(t, dir, "clone", "--quiet", bare, seed)
	gitOK(t, seed, "commit", "--quiet", "--allow-empty", "-m", "p")
	gitOK(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/orch/r1/A/1")
	gitOK(t, seed, "update-ref", "-d", "refs/heads/orch/r1/A/1")
	gitOK(t, seed, "update-ref", "-d", "refs/remotes/origin/orch/r1/A/1")
	// Only the URL with the token reaches the repository.
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "url."+bare+".insteadOf")
	t.Setenv("GIT_CONFIG_VALUE_0", tokenRemote)
	t.Setenv(GitRemoteEnv, tokenRemote)
	out := captureStderr(t, func() {
		(&follower{id: "r1", gitRemote: redact.StripRemote(tokenRemote), gitRepo: seed}).fetchBranches()
	})
	if !strings.Contains(out, "fetched from https://git.example.invalid/org/repo.git") || strings.Contains(out, "ghs_FakeT0ken4242") {
		t.Errorf("follower said: %s", out)
	}
	gitOK(t, seed, "rev-parse", "--verify", "refs/heads/orch/r1/A/1")
	// Another remote of its own: no token put back; git's error masked.
	t.Setenv(GitRemoteEnv, "https://other:0therT0ken99@elsewhere.invalid/x.git")
	out = captureStderr(t, func() {
		(&follower{id: "r1", gitRemote: tokenRemote, gitRepo: seed}).fetchBranches()
	})
	if strings.Contains(out, "ghs_FakeT0ken4242") || strings.Contains(out, "0therT0ken99") {
		t.Errorf("follower said: %s", out)
	}
}

// captureStderr is what f writes to os.Stderr.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	f()
	os.Stderr = old
	w.Close()
	return <-done
}
