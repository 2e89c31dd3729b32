//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// TestCommandReference keeps docs/reference/commands/ what `orch help`
// says: cobra's generated Markdown of every command, one page each, and an
// index. Rewrite it with: go test ./cmd/orch -run TestCommandReference -update
func TestCommandReference(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "reference", "commands")
	gen := t.TempDir()
	root := newRootCmd(newFactory(&streams{in: bytes.NewReader(nil), out: &bytes.Buffer{}, err: &bytes.Buffer{}}))
	root.DisableAutoGenTag = true // no date: the pages are the same from run to run
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	prepend := func(string) string {
		return "<!-- Generated from orch's commands by `go test ./cmd/orch -run TestCommandReference -update`: edit the command's help, not this page. -->\n\n"
	}
	link := func(name string) string { return name }
	if err := doc.GenMarkdownTreeCustom(root, gen, prepend, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gen, "README.md"), []byte(commandIndex(root)), 0o644); err != nil {
		t.Fatal(err)
	}
	got := readTree(t, gen)
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range got {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := readTree(t, dir)
	for name, data := range got {
		if old, ok := want[name]; !ok {
			t.Errorf("docs/reference/commands/%s is missing (a new command?): rewrite with go test ./cmd/orch -run TestCommandReference -update", name)
		} else if !bytes.Equal(old, data) {
			t.Errorf("docs/reference/commands/%s is not what orch help says now: rewrite with go test ./cmd/orch -run TestCommandReference -update", name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("docs/reference/commands/%s documents no command any more: rewrite with go test ./cmd/orch -run TestCommandReference -update", name)
		}
	}
}

// commandIndex lists every command with its one-line summary.
func commandIndex(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("<!-- Generated from orch's commands by `go test ./cmd/orch -run TestCommandReference -update`. -->\n\n")
	b.WriteString("# Commands\n\nEvery orch command, as `orch help COMMAND` prints it. Exit codes: [exit codes](../exit-codes.md).\n\n")
	b.WriteString("| command | does |\n|---|---|\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root || c.IsAdditionalHelpTopicCommand() {
			return
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
		b.WriteString("| [`" + c.CommandPath() + "`](" + name + ") | " + strings.ReplaceAll(c.Short, "|", `\|`) + " |\n")
		children := c.Commands()
		sort.Slice(children, func(i, j int) bool { return children[i].Name() < children[j].Name() })
		for _, child := range children {
			walk(child)
		}
	}
	walk(root)
	return b.String()
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	return out
}
