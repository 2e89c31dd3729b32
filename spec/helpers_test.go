package spec

import (
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/testfs"
)

// tree writes files into a temporary directory and changes into it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := testfs.Write(t, files, 0o644)
	t.Chdir(dir)
	return dir
}

// validate loads paths and runs the checks, returning diagnostics as strings
// "file:line:col: severity: message [code]", sorted.
func validate(t *testing.T, paths ...string) (*Set, []string) {
	t.Helper()
	set, diags, err := Load(paths, LoadOptions{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	diags = append(diags, Check(set, CheckOptions{})...)
	var out []string
	for _, d := range diags.Sorted() {
		out = append(out, d.String())
	}
	return set, out
}

func expectDiags(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
