package sched_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCoreDoesNoIO keeps the core what its doc says: no I/O package, no
// mutex, no goroutine, no channel, no clock read. The time comes with each
// input; what the core reads comes through Lookup.
func TestCoreDoesNoIO(t *testing.T) {
	allowed := map[string]bool{"container/heap": true, "encoding/json": true, "fmt": true, "math/rand/v2": true,
		"sort": true, "strings": true, "time": true,
		"github.com/orch-cli/orch/planner": true, "github.com/orch-cli/orch/spec": true}
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a goroutine", fset.Position(n.Pos()))
			case *ast.ChanType:
				t.Errorf("%s: a channel", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "time" && (n.Sel.Name == "Now" || n.Sel.Name == "Since" ||
					n.Sel.Name == "Until" || n.Sel.Name == "Sleep" || n.Sel.Name == "After" || n.Sel.Name == "NewTimer") {
					t.Errorf("%s: time.%s (the time comes with the input)", fset.Position(n.Pos()), n.Sel.Name)
				}
			}
			return true
		})
	}
}
