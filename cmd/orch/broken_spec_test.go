//go:build unix

package main

import (
	"strings"
	"testing"
)

// TestRunAndPlanReportBrokenSpecs checks that orch run and orch plan answer a
// spec that does not load with validate's positioned diagnostics and exit 1,
// not "no cuelist" and exit 2.
func TestRunAndPlanReportBrokenSpecs(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 9; i++ {
		p, c := string(rune('a'+i-1)), string(rune('a'+i))
		bomb += c + ": &" + c + " [" + strings.Repeat("*"+p+", ", 8) + "*" + p + "]\n"
	}
	bomb += "cuelist: {id: c, cues: [{id: A, agents: [a]}], env: *i}\n"
	files := map[string]string{
		"nul.yaml":  "cuelist:\n  id: c\x00\n  cues: []\n",
		"utf8.yaml": "cuelist:\n  id: caf\xe9\n  cues: []\n",
		"bomb.yaml": bomb,
		"big.yaml":  "cuelist:\n  id: c\n  cues: []\n" + strings.Repeat("# padding\n", 200),
		"deep.yaml": "cuelist:\n  id: c\n  cues: " + strings.Repeat("[", 100_000) + "\n",
	}
	dir := writeFiles(t, files)
	for name := range files {
		args := []string{"--max-file-size", "1KiB", name}
		_, want, _ := runOrch(t, dir, append([]string{"validate"}, args...)...)
		for _, cmd := range []string{"run", "plan"} {
			code, stdout, stderr := runOrch(t, dir, append([]string{cmd}, args...)...)
			if code != exitFailed || stderr != want || stdout != "" {
				t.Errorf("orch %s %s: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and validate's report:\n%s", cmd, name, code, stdout, stderr, want)
			}
		}
	}
}
