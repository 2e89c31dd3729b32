package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestEventReference keeps docs/reference/events.md what runner/record
// says: every event type (the Ev constants), its doc comment, and the
// fields of its payload (the type whose EventType returns it), read from
// the source so that a new event or field shows up here.
func TestEventReference(t *testing.T) {
	dir := filepath.Join(repoRoot, "runner", "record")
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	pkg := pkgs["record"]
	if pkg == nil {
		t.Fatalf("no package record in %s", dir)
	}
	type eventType struct{ constName, value, doc string }
	var events []eventType
	structs := map[string]*ast.StructType{}
	payloadOf := map[string]string{} // event constant -> payload type
	var files []string
	for name := range pkg.Files {
		files = append(files, name)
	}
	sort.Strings(files)
	for _, name := range files {
		for _, decl := range pkg.Files[name].Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.ValueSpec:
						if d.Tok != token.CONST || len(s.Names) != 1 || len(s.Values) != 1 || !strings.HasPrefix(s.Names[0].Name, "Ev") {
							continue
						}
						lit, ok := s.Values[0].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, _ := strconv.Unquote(lit.Value)
						doc := s.Doc.Text()
						if doc == "" && len(d.Specs) == 1 {
							doc = d.Doc.Text()
						}
						events = append(events, eventType{s.Names[0].Name, v, doc})
					case *ast.TypeSpec:
						if st, ok := s.Type.(*ast.StructType); ok {
							structs[s.Name.Name] = st
						}
					}
				}
			case *ast.FuncDecl:
				// func (XData) EventType() string { return EvY }
				if d.Name.Name != "EventType" || d.Recv == nil || len(d.Recv.List) != 1 || d.Body == nil || len(d.Body.List) != 1 {
					continue
				}
				ret, ok := d.Body.List[0].(*ast.ReturnStmt)
				if !ok || len(ret.Results) != 1 {
					continue
				}
				if id, ok := ret.Results[0].(*ast.Ident); ok {
					if recv, ok := d.Recv.List[0].Type.(*ast.Ident); ok {
						payloadOf[id.Name] = recv.Name
					}
				}
			}
		}
	}
	if len(events) < 20 {
		t.Fatalf("found %d event types in runner/record, want at least 20", len(events))
	}
	sort.Slice(events, func(i, j int) bool { return events[i].value < events[j].value })

	var b strings.Builder
	b.WriteString("# Events\n\n")
	b.WriteString("<!-- Generated from runner/record by `go test ./docs -update`: edit the doc comments there, not this page. -->\n\n")
	b.WriteString("A run's record is its event log: every change of a run is an event, appended in one\n")
	b.WriteString("sequence per run, and the runs, cues and attempts tables are kept from it. `orch events RUN`\n")
	b.WriteString("prints it (`--output json`: one event a line, as below; `--follow` as it grows), `orch run\n")
	b.WriteString("--output json` streams it, and `orch serve` serves it (`/api/runs/RUN/events`, `/api/stream`).\n\n")
	if st := structs["Event"]; st != nil {
		b.WriteString("Every event has these fields:\n")
		writeFields(&b, fset, st, envelope)
	}
	b.WriteString("\nThe types, and what each one's `data` holds:\n\n")
	for _, e := range events {
		fmt.Fprintf(&b, "- [`%s`](#%s)\n", e.value, slug(e.value))
	}
	for _, e := range events {
		fmt.Fprintf(&b, "\n## %s\n\n", e.value)
		doc := strings.TrimSpace(strings.ReplaceAll(e.doc, "\n", " "))
		doc = strings.TrimPrefix(doc, e.constName+" ")
		fmt.Fprintf(&b, "%s\n", capitalizeFirst(doc))
		payload := payloadOf[e.constName]
		if st := structs[payload]; st != nil {
			fmt.Fprintf(&b, "\n`data` (`%s`):\n", payload)
			writeFields(&b, fset, st, nil)
		}
	}
	checkGenerated(t, filepath.Join("reference", "events.md"), []byte(b.String()))
}

// envelope says what the fields every event has mean, where the Event
// type's own comments do not.
var envelope = map[string]string{
	"run_id":  "the run (12 hex digits)",
	"seq":     "the event's place in its run's log: 1, 2, 3, … with no gap",
	"at":      "when it was recorded (RFC 3339, UTC)",
	"type":    "one of the types below",
	"cue":     "the cue, fan-out item (CUE[id]) or child task (CUE/1) it is about",
	"agent":   "the agent it is about",
	"attempt": "the attempt's number (they go on across retries and fallbacks)",
	"state":   "the new state, for the types that set one",
	"reason":  "why, in words (secrets masked)",
}

func capitalizeFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// writeFields writes a table of a struct's JSON fields: name, Go type, and
// the field's comment.
func writeFields(b *strings.Builder, fset *token.FileSet, st *ast.StructType, meaning map[string]string) {
	b.WriteString("\n| field | type | meaning |\n|---|---|---|\n")
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 || f.Tag == nil {
			continue
		}
		tag, _ := strconv.Unquote(f.Tag.Value)
		name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		var typ strings.Builder
		_ = formatNode(&typ, fset, f.Type)
		comment := strings.TrimSpace(f.Comment.Text() + " " + f.Doc.Text())
		if comment == "" {
			comment = meaning[name]
		}
		fmt.Fprintf(b, "| `%s` | `%s` | %s |\n", name, typ.String(), cell(comment))
	}
}

// formatNode prints a type expression as written.
func formatNode(b *strings.Builder, fset *token.FileSet, e ast.Expr) error {
	switch x := e.(type) {
	case *ast.Ident:
		b.WriteString(x.Name)
	case *ast.SelectorExpr:
		_ = formatNode(b, fset, x.X)
		b.WriteString("." + x.Sel.Name)
	case *ast.StarExpr:
		b.WriteString("*")
		_ = formatNode(b, fset, x.X)
	case *ast.ArrayType:
		b.WriteString("[]")
		_ = formatNode(b, fset, x.Elt)
	case *ast.MapType:
		b.WriteString("map[")
		_ = formatNode(b, fset, x.Key)
		b.WriteString("]")
		_ = formatNode(b, fset, x.Value)
	case *ast.InterfaceType:
		b.WriteString("any")
	default:
		b.WriteString("…")
	}
	return nil
}
