package proc

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNoOrchPackage: the package stands alone (the standard library
// and golang.org/x/sys), so another engine's worker can run agents with it
// without the runner, the planner or the store.
func TestImportsNoOrchPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files (%v)", err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if !strings.Contains(first, ".") || strings.HasPrefix(path, "golang.org/x/sys/") {
				continue // the standard library, or x/sys
			}
			t.Errorf("%s imports %s", name, path)
		}
	}
}
