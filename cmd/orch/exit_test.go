//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

const validAgent = "agent:\n  id: a\n  command: [/bin/true]\n"

// TestValidateExitCodes checks the exit codes of docs/design.md#exit-codes in-process
// (testscript's `! exec` only tells zero from non-zero).
func TestValidateExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		args   []string
		want   int
		stderr string
	}{
		{"valid", map[string]string{"a.yaml": validAgent}, []string{"validate", "a.yaml"}, exitOK, ""},
		{"invalid", map[string]string{"a.yaml": "agent:\n  id: a\n"}, []string{"validate", "a.yaml"}, exitFailed, ""},
		{"warning only", map[string]string{"a.yaml": validAgent, "e.yaml": ""}, []string{"validate", "."}, exitOK, ""},
		{"warning strict", map[string]string{"a.yaml": validAgent, "e.yaml": ""}, []string{"validate", "--strict", "."}, exitFailed, ""},
		{"missing file", nil, []string{"validate", "nope.yaml"}, exitUsage, "orch: nope.yaml: no such file or directory"},
		{"glob matches nothing", nil, []string{"validate", "*.yaml"}, exitUsage, "pattern matches no file"},
		{"empty dir", map[string]string{"x.txt": ""}, []string{"validate", "."}, exitUsage, "no *.yaml or *.yml files"},
		{"no args", nil, []string{"validate"}, exitUsage, "needs at least 1 argument"},
		{"bad flag", nil, []string{"validate", "--nope", "a.yaml"}, exitUsage, "unknown flag: --nope"},
		{"bad format", map[string]string{"a.yaml": validAgent}, []string{"validate", "--format", "xml", "a.yaml"}, exitUsage, `unknown format "xml"`},
		{"bad size", map[string]string{"a.yaml": validAgent}, []string{"validate", "--max-file-size", "lots", "a.yaml"}, exitUsage, "invalid size"},
		{"unknown command", nil, []string{"frobnicate"}, exitUsage, "unknown command"},
		{"schema unknown kind", nil, []string{"schema", "nope"}, exitUsage, `unknown schema "nope"`},
		{"version", nil, []string{"version"}, exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			code, _, stderr := runOrch(t, dir, tt.args...)
			if code != tt.want {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.want, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.stderr)
			}
			if strings.Count(stderr, "orch:") > 1 {
				t.Errorf("error printed more than once: %q", stderr)
			}
		})
	}
}

// TestRunExitCodes checks orch run's exit codes in-process: completed 0,
// failed 1, usage 2, paused 3.
func TestRunExitCodes(t *testing.T) {
	const agent = "---\nagent: {id: a, command: [sh, -c, 'exit 0'], concurrency: 2}\n---\nagent: {id: bad, command: [sh, -c, 'exit 4']}\n"
	tests := []struct {
		name string
		spec string
		args []string
		want int
	}{
		{"completed", "cuelist: {id: c, cues: [{id: A, agents: [a]}]}\n" + agent, nil, exitOK},
		{"failed", "cuelist: {id: c, cues: [{id: A, agents: [bad]}]}\n" + agent, nil, exitFailed},
		{"paused", "cuelist: {id: c, cues: [{id: A, agents: [a], go: manual}]}\n" + agent, nil, exitPaused},
		{"invalid", "cuelist: {id: c, cues: [{id: A, agents: [nobody]}]}\n" + agent, nil, exitFailed},
		{"bad set", "cuelist: {id: c, cues: [{id: A, agents: [a]}]}\n" + agent, []string{"--set", "x=1"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"c.yaml": tt.spec})
			args := append([]string{"run", "--db", filepath.Join(dir, "o.db"), "c.yaml"}, tt.args...)
			code, stdout, stderr := runOrch(t, dir, args...)
			if code != tt.want {
				t.Errorf("exit %d, want %d\n%s%s", code, tt.want, stdout, stderr)
			}
		})
	}
}
