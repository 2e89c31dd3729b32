package spec

import (
	"runtime"
	"strings"
	"testing"
)

// deepInputs are nestings far beyond MaxDepth, in every form YAML has, with
// where the too-deep diagnostic must point (the first collection at depth 65,
// where the converter points too). Block mappings need a space more per level,
// so theirs is as deep as fits in a few megabytes.
func deepInputs() []struct {
	name, data string
	line, col  int
} {
	const n = 100_000
	head := "agent:\n  id: a\n  command: [x]\n  env:"
	var blockMaps strings.Builder
	blockMaps.WriteString(head + "\n")
	for i := range 3000 {
		blockMaps.WriteString(strings.Repeat(" ", i+4) + "a:\n")
	}
	return []struct {
		name, data string
		line, col  int
	}{
		{"flow sequences", head + " " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n", 4, 8 + 63},
		{"flow mappings", head + " " + strings.Repeat("{a: ", n) + "1" + strings.Repeat("}", n) + "\n", 4, 8 + 63*4},
		{"block sequences", head + "\n    " + strings.Repeat("- ", n) + "x\n", 5, 5 + 63*2},
		{"block mappings", blockMaps.String(), 5 + 63, 4 + 63 + 1},
		{"flow in block", head + "\n    " + strings.Repeat("- ", 30) + strings.Repeat("[", n) + "\n", 5, 5 + 30*2 + 33},
	}
}

// TestDeepNesting checks that nesting of any form and any depth is answered
// by one positioned diagnostic, found before a parser recurses into it: each
// load allocates a few times the file's size, not gigabytes.
func TestDeepNesting(t *testing.T) {
	for _, tt := range deepInputs() {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			l := &loader{opts: LoadOptions{MaxFileSize: DefaultMaxFileSize}, set: &Set{}, seen: map[string]bool{}, noIncludes: true}
			l.loadData(&File{Name: "deep.yaml"}, []byte(tt.data))
			runtime.ReadMemStats(&after)
			want := Diagnostic{Severity: Error, Pos: Pos{File: "deep.yaml", Line: tt.line, Col: tt.col}, Code: "too-deep", Message: "nesting deeper than 64 levels"}
			if len(l.diags) != 1 || l.diags[0] != want {
				t.Errorf("diagnostics %v, want [%v]", l.diags, want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 10*uint64(len(tt.data))+1<<20 {
				t.Errorf("loading %d bytes allocated %d MB", len(tt.data), alloc>>20)
			}
		})
	}
}

// TestDepthScanKeepsText checks that brackets and dashes in text (quoted
// scalars, comments, block scalars, plain scalars) are not counted, and that
// the deepest nesting allowed still loads.
func TestDepthScanKeepsText(t *testing.T) {
	deepText := strings.Repeat("[", 200)
	ok := []string{
		"agent:\n  id: a\n  command: [\"" + deepText + "\", '" + deepText + "''']\n",
		"agent:\n  id: a\n  run: |\n    " + deepText + "\n      " + strings.Repeat("- ", 100) + "\n\n  command: [x]\n",
		"agent:\n  id: a\n  run: >-\n   " + deepText + "\n  command: [x] # " + deepText + "\n",
		"agent:\n  id: a\n  run: echo " + deepText + " {a} - - -\n  command:\n  - \"multi\n    " + deepText + "\"\n",
		"agent:\n  id: a\n  command: [x]\n  env:\n    - - - |\n          " + deepText + "\n      - y\n",
		"agent:\n  id: a\n  command: [x]\n  env: {k: " + strings.Repeat("[", 62) + strings.Repeat("]", 62) + "}\n",
	}
	for i, data := range ok {
		l := &loader{opts: LoadOptions{MaxFileSize: DefaultMaxFileSize}, set: &Set{}, seen: map[string]bool{}, noIncludes: true}
		f := &File{Name: "t.yaml"}
		l.loadData(f, []byte(data))
		for _, d := range l.diags {
			if d.Code == "too-deep" || d.Code == "yaml-syntax" {
				t.Errorf("input %d: %v", i, d)
			}
		}
		if len(f.Docs) != 1 {
			t.Errorf("input %d: not parsed", i)
		}
	}
}

// TestSyntaxErrorsInDeepFiles checks that a syntax error in a file a parser
// would recurse deep into is located without asking goccy/go-yaml, which
// would take seconds and gigabytes on it.
func TestSyntaxErrorsInDeepFiles(t *testing.T) {
	for _, data := range []string{
		"[" + strings.Repeat("\n- ", 100_000) + "\n", // block entries inside a flow sequence
		"a: b: " + strings.Repeat("[", 100_000) + "\n",
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		l := &loader{opts: LoadOptions{MaxFileSize: DefaultMaxFileSize}, set: &Set{}, seen: map[string]bool{}, noIncludes: true}
		l.loadData(&File{Name: "bad.yaml"}, []byte(data))
		runtime.ReadMemStats(&after)
		if len(l.diags) != 1 || l.diags[0].Code != "yaml-syntax" || l.diags[0].Pos.Line != 1 {
			t.Errorf("%.20q...: diagnostics %v, want one yaml-syntax error on line 1", data, l.diags)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 20*uint64(len(data))+1<<20 {
			t.Errorf("%.20q...: loading %d bytes allocated %d MB", data, len(data), alloc>>20)
		}
	}
}
