//go:build unix

package spec

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestFIFOsAreNotRead checks that a FIFO named *.yaml, given, walked or
// included, or named as an artifact, is a diagnostic: opening one to read
// used to wait for a writer forever.
func TestFIFOsAreNotRead(t *testing.T) {
	tree(t, map[string]string{
		"specs/cuelist.yaml": "cuelist:\n  id: c\n  include: [pipe.yaml]\n  cues: []\n",
		"walk/ok.yaml":       "agent: {id: a, command: [x]}\n",
	})
	must(t, syscall.Mkfifo("specs/pipe.yaml", 0o644))
	must(t, syscall.Mkfifo("walk/pipe.yaml", 0o644))
	must(t, syscall.Mkfifo("pipe", 0o644))

	_, _, err := Load([]string{"specs/pipe.yaml"}, LoadOptions{})
	var pe *PathError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
		t.Errorf("given: error = %v, want a PathError: not a regular file", err)
	}
	_, got := validate(t, "specs/cuelist.yaml", "walk")
	expectDiags(t, withCode(got, "unreadable-include", "unreadable-file"),
		`specs/cuelist.yaml:3:13: error: include "pipe.yaml": cannot read specs/pipe.yaml: not a regular file (a named pipe) [unreadable-include]`,
		`walk/pipe.yaml: error: cannot read walk/pipe.yaml: not a regular file (a named pipe) [unreadable-file]`)

	root, err := os.OpenRoot(".")
	must(t, err)
	defer root.Close()
	if err := CheckArtifact(root, Artifact{Path: "pipe", Hash: "sha256:00"}); err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
		t.Errorf("artifact: %v", err)
	}
}
