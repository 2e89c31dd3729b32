package spec

import (
	"bytes"
	"os"
	"path/filepath"
)

// insideGitWorkTree reports whether dir is inside a git work tree, as git
// finds one: a .git directory or file in it or above it that git would take
// for a repository (an empty directory named .git is not one). It is a
// warning's guess only (orch run asks git itself, in the project root).
func insideGitWorkTree(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		if isGitDir(filepath.Join(dir, ".git")) {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// isGitDir reports whether path is what git accepts as a repository's .git:
// a directory with HEAD, objects and refs, or a file "gitdir: ..." (a
// worktree's or a submodule's).
func isGitDir(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		b := make([]byte, len("gitdir:"))
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		n, _ := f.Read(b)
		return bytes.Equal(b[:n], []byte("gitdir:"))
	}
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(path, name)); err != nil {
			return false
		}
	}
	return true
}
