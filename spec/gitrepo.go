package spec

import (
	"os"
	"path/filepath"
)

// insideGitWorkTree reports whether dir is inside a git work tree, as git
// finds one: a .git directory or file in it or above it. It is a warning's
// guess only (orch run asks git itself, in the project root).
func insideGitWorkTree(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}
