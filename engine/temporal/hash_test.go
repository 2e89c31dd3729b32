package temporal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkerElsewhereAcceptsTheRun: a worker whose --root is another
// checkout of the same project (another directory, as on another machine)
// accepts the run's spec hash; a checkout with a changed file is refused.
func TestWorkerElsewhereAcceptsTheRun(t *testing.T) {
	const path = "examples/deploy/cuelist.yaml"
	hash := specHashOf(t, repoRoot(t), path)
	other := filepath.Join(t.TempDir(), "another", "checkout")
	if err := os.CopyFS(filepath.Join(other, "examples", "deploy"), os.DirFS(filepath.Join(repoRoot(t), "examples", "deploy"))); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Activities{Root: other}).plan(path, hash); err != nil {
		t.Fatalf("a worker with --root %s: %v", other, err)
	}
	if err := os.WriteFile(filepath.Join(other, path), append(mustRead(t, filepath.Join(other, path)), "\n# changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Activities{Root: other}).plan(path, hash); err == nil || !strings.Contains(err.Error(), "is not the one the run started with") {
		t.Fatalf("a changed checkout: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
