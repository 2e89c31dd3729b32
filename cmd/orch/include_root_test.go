//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateNeverPrintsFilesOutsideTheRoot checks, in every output format,
// that a spec naming files outside the project (a CI token file, say) gets a
// diagnostic that names the path and never shows the file's content.
func TestValidateNeverPrintsFilesOutsideTheRoot(t *testing.T) {
	const token = "GITHUB_TOKEN=ghs_0123456789secret"
	dir := writeFiles(t, map[string]string{
		"secret.env":      token + "\n",
		"project/a.yaml":  validAgent,
		"project/c.yaml":  "cuelist:\n  id: c\n  include: [../secret.env, leak.yaml, ABS]\n  cues: [{id: A, agents: [a]}]\n",
		"project/d/x.txt": "",
	})
	abs := filepath.Join(dir, "secret.env")
	c := filepath.Join(dir, "project", "c.yaml")
	data, _ := os.ReadFile(c)
	if err := os.WriteFile(c, []byte(strings.Replace(string(data), "ABS", abs, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret.env", filepath.Join(dir, "project", "leak.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"project/c.yaml"}, {"project"}} {
		for _, format := range []string{"text", "json", "github", "sarif"} {
			code, stdout, stderr := runOrch(t, dir, append([]string{"validate", "--format", format}, args...)...)
			if code != exitFailed || !strings.Contains(stdout, "outside") {
				t.Errorf("validate --format %s %v: exit %d, want 1 and a diagnostic:\n%s%s", format, args, code, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "ghs_") {
				t.Errorf("validate --format %s %v printed the secret:\n%s%s", format, args, stdout, stderr)
			}
		}
	}
}
