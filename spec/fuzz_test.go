package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes through loading, schema validation and the
// semantic checks. Whatever the input: no panic, no hang, and every diagnostic
// has a position inside the file. Seeds are every YAML file of the testscripts
// and the examples; crashers found are kept in testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l := &loader{opts: LoadOptions{MaxFileSize: DefaultMaxFileSize}, set: &Set{}, seen: map[string]bool{}, noIncludes: true}
		file := &File{Name: "fuzz.yaml", Abs: "/fuzz.yaml"}
		l.loadData(file, data)
		diags := append(l.diags, Check(l.set, CheckOptions{})...)
		lines := file.Lines()
		for _, d := range diags {
			if d.Pos.File != "fuzz.yaml" || d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Col < 1 {
				t.Fatalf("diagnostic outside the file (%d lines): %v", lines, d)
			}
			if d.Message == "" || d.Code == "" {
				t.Fatalf("diagnostic without message or code: %#v", d)
			}
		}
		_ = diags.Sorted()
	})
}

func fuzzSeeds(f testing.TB) [][]byte {
	var seeds [][]byte
	scripts, _ := filepath.Glob(filepath.Join("..", "testdata", "script", "*.txtar"))
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		for name, data := range txtarFiles(string(b)) {
			if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
				seeds = append(seeds, []byte(data))
			}
		}
	}
	_ = filepath.WalkDir(filepath.Join("..", "examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			if b, err := os.ReadFile(p); err == nil {
				seeds = append(seeds, b)
			}
		}
		return nil
	})
	seeds = append(seeds, []byte("a: &a [x, *a]\n"), []byte("\xef\xbb\xbf---\n...\n"), []byte("{? [a]: b}\n"))
	for _, deep := range deepInputs() {
		if len(deep.data) < 1<<20 {
			seeds = append(seeds, []byte(deep.data))
		}
	}
	return seeds
}

// txtarFiles splits a txtar archive ("-- name --" lines) into its files.
func txtarFiles(archive string) map[string]string {
	files := map[string]string{}
	name := ""
	for _, line := range strings.SplitAfter(archive, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			name = strings.TrimSpace(trimmed[3 : len(trimmed)-3])
			files[name] = ""
			continue
		}
		if name != "" {
			files[name] += line
		}
	}
	return files
}
