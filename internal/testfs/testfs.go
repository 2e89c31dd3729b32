// Package testfs writes trees of files for tests.
package testfs

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes files (path relative to the tree -> content) with mode into a
// new temporary directory, which the test removes at its end, and returns
// the directory.
func Write(t testing.TB, files map[string]string, mode os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
