package spec

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// An empty directory named .git above a spec (a tool made one in /tmp) is
// no repository: validate's worktree warning must not be silenced by it. A
// real repository, and a worktree's .git file, are found.
func TestInsideGitWorkTree(t *testing.T) {
	top := t.TempDir()
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	specs := filepath.Join(top, "project", "specs")
	if err := os.MkdirAll(specs, 0o755); err != nil {
		t.Fatal(err)
	}
	if insideGitWorkTree(specs) {
		t.Errorf("an empty .git directory above %s was taken for a repository", specs)
	}
	repo := filepath.Join(top, "project")
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Skipf("git init: %v: %s", err, out)
	}
	if !insideGitWorkTree(specs) {
		t.Errorf("%s is inside the repository %s", specs, repo)
	}
	wt := filepath.Join(top, "wt")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(repo, ".git")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !insideGitWorkTree(wt) {
		t.Errorf("%s has a .git file naming its repository", wt)
	}
}
