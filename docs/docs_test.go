// Package docs holds the tests that keep orch's documentation true: the
// design's sections that code cites resolve, the package map lists the
// module's packages, links between pages lead somewhere, and the generated
// references (spec keys, events) are what the generators make of the code.
// Rewrite the generated pages with: go test ./docs -update
package docs

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated reference pages")

// repoRoot is the module's root: this package is docs/.
const repoRoot = ".."

// slug is the anchor GitHub gives a Markdown heading: lower case, spaces
// made hyphens, punctuation other than hyphens and underscores dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var explicitAnchor = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)

// anchors lists the anchors of a Markdown file: its headings' (outside code
// blocks) and explicit <a id> ones.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if strings.HasPrefix(line, "#") {
			h := strings.TrimLeft(line, "#")
			if strings.HasPrefix(h, " ") {
				h = strings.NewReplacer("`", "", "*", "").Replace(h)
				s := slug(h)
				if n := seen[s]; n > 0 {
					out[fmt.Sprintf("%s-%d", s, n)] = true
				} else {
					out[s] = true
				}
				seen[s]++
			}
		}
		for _, m := range explicitAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
	}
	return out
}

var (
	designCitation = regexp.MustCompile(`docs/design\.md#([A-Za-z0-9_-]+)`)
	// A citation of a document that is not in the repository: the design
	// and the seeds it started from, by their old names.
	staleCitation = regexp.MustCompile(`DESIGN §|\bseed 00\d|\bseeds? \d{3}\b`)
)

// goAndDocFiles lists the module's .go files and Markdown pages, leaving out
// testdata and hidden directories.
func goAndDocFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDesignCitations checks that every docs/design.md#anchor cited in the
// code and the pages names a section of docs/design.md, and that nothing
// cites the design or the seeds by the names of documents outside the
// repository ("DESIGN §4", "seed 004 §8").
func TestDesignCitations(t *testing.T) {
	design := anchors(t, "design.md")
	cited := 0
	for _, path := range goAndDocFiles(t) {
		if filepath.Base(path) == "docs_test.go" {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			for _, m := range designCitation.FindAllStringSubmatch(line, -1) {
				cited++
				if !design[m[1]] {
					t.Errorf("%s:%d cites docs/design.md#%s, which is no section of docs/design.md", path, n, m[1])
				}
			}
			if strings.HasSuffix(path, ".go") {
				if m := staleCitation.FindString(line); m != "" {
					t.Errorf("%s:%d cites %q, a document not in the repository: cite docs/design.md#SECTION", path, n, m)
				}
			}
		}
		f.Close()
	}
	if cited < 20 {
		t.Errorf("only %d citations of docs/design.md found: the code cites its sections", cited)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// docPages lists the README and every page under docs/.
func docPages() []string {
	pages := []string{filepath.Join(repoRoot, "README.md")}
	_ = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return nil
	})
	return pages
}

// TestDocLinks checks that every relative link of the README and of docs/
// leads to a file or directory of the repository, and, into a Markdown
// page, to one of its anchors.
func TestDocLinks(t *testing.T) {
	pages := docPages()
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for n, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), file)
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %s: no such file", page, n+1, target)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading with that anchor", page, n+1, target, path)
				}
			}
		}
	}
}

// TestArchitecturePackages keeps the package map of docs/architecture.md
// (the first code block under "## Packages") the module's packages, as go
// list ./... lists them.
func TestArchitecturePackages(t *testing.T) {
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	var listed []string
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "github.com/orch-cli/orch"), "/")
		listed = append(listed, rel+"/")
	}
	data, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n## Packages\n")
	if i < 0 {
		t.Fatal(`docs/architecture.md has no "## Packages" section`)
	}
	block := text[i:]
	start := strings.Index(block, "```\n")
	end := strings.Index(block[start+4:], "```")
	if start < 0 || end < 0 {
		t.Fatal(`docs/architecture.md: no code block under "## Packages"`)
	}
	var mapped []string
	for _, line := range strings.Split(block[start+4:start+4+end], "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			mapped = append(mapped, f[0])
		} else if len(f) == 1 {
			t.Errorf("docs/architecture.md: package %s has no description", f[0])
		}
	}
	in := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, p := range listed {
		if !in(mapped, p) {
			t.Errorf("package %s is missing from the package map of docs/architecture.md", p)
		}
	}
	for _, p := range mapped {
		if !in(listed, p) {
			t.Errorf("docs/architecture.md maps %s, which go list ./... does not list", p)
		}
	}
}

// checkGenerated compares a generated page with the one checked in, or
// rewrites it with -update.
func checkGenerated(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: generate it with go test ./docs -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what its generator makes of the code now: rewrite it with go test ./docs -update\n%s", path, firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  checked in: %s\n  generated:  %s", i+1, a, b)
		}
	}
	return ""
}

// TestExitCodeReference checks that every exit code cmd/orch defines is
// documented in docs/reference/exit-codes.md, in its table.
func TestExitCodeReference(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "cmd", "orch", "exit.go"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join("reference", "exit-codes.md"))
	if err != nil {
		t.Fatal(err)
	}
	codes := regexp.MustCompile(`(?m)^\s*exit[A-Z]\w*\s*=\s*(\d+)`).FindAllStringSubmatch(string(src), -1)
	if len(codes) < 5 {
		t.Fatalf("found %d exit codes in cmd/orch/exit.go, want at least 5", len(codes))
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\d+)` \\|").FindAllStringSubmatch(string(page), -1) {
		documented = append(documented, m[1])
	}
	var defined []string
	for _, m := range codes {
		defined = append(defined, m[1])
	}
	sort.Strings(documented)
	sort.Strings(defined)
	if strings.Join(documented, " ") != strings.Join(defined, " ") {
		t.Errorf("docs/reference/exit-codes.md documents exit codes %v; cmd/orch/exit.go defines %v", documented, defined)
	}
}

var repoPath = regexp.MustCompile(`\b(?:cmd|runner|spec|planner|protocols|schemas|engine|internal|examples|e2e|bench|scripts|tools|serve|control|testdata|docs)/[\w./@-]*\.(?:go|py|sh|yaml|yml|json|md|sql)\b`)

// TestDocPaths checks that every file of the repository the docs name by its
// path (runner/sched/core.go, examples/team/cuelist.real.yaml) exists: code
// moves, and a page that points to where it was misleads.
func TestDocPaths(t *testing.T) {
	pages := docPages()
	named := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(data), "\n") {
			for _, loc := range repoPath.FindAllStringIndex(line, -1) {
				if loc[0] > 0 && strings.ContainsRune("/(", rune(line[loc[0]-1])) {
					continue // a link's target, relative to its page: TestDocLinks checks those
				}
				p := line[loc[0]:loc[1]]
				named++
				if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
					t.Errorf("%s:%d names %s, which is not in the repository", page, n+1, p)
				}
			}
		}
	}
	if named < 30 {
		t.Errorf("the docs name only %d files of the repository: is the pattern right?", named)
	}
}
