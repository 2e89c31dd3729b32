//go:build linux || darwin

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestLogsEscapesOnTerminal: orch logs on a terminal shows the control
// characters an agent wrote (a window title, colours) as ^X instead of
// sending them to the terminal; --raw sends them as written, and so does
// orch logs into a pipe (issue 27, item 6).
func TestLogsEscapesOnTerminal(t *testing.T) {
	dir := writeFiles(t, map[string]string{"cuelist.yaml": `
cuelist:
  id: esc
  cues:
    - {id: A, agents: [noisy]}
---
agent:
  id: noisy
  command: [sh, -c, 'printf "\033]0;PWNED\007\033[31mred\033[0m\tdone\n"']
`})
	if code, stdout, stderr := runOrch(t, dir, "run", "--db", dir+"/.orch/orch.db", "cuelist.yaml"); code != 0 {
		t.Fatalf("orch run: exit %d\n%s%s", code, stdout, stderr)
	}
	logs := func(args ...string) []byte {
		p := startPty(t, dir, 120, 20, append([]string{"logs", "last"}, args...)...)
		select {
		case <-p.done:
		case <-time.After(60 * time.Second): // a hang guard
			t.Fatal("orch logs did not end")
		}
		return p.output(0)
	}
	out := logs()
	if bytes.ContainsAny(out, "\x1b\x07") {
		t.Errorf("orch logs on a terminal wrote escape characters: %q", out)
	}
	if want := "^[]0;PWNED^G^[[31mred^[[0m\tdone"; !strings.Contains(string(out), want) {
		t.Errorf("orch logs on a terminal wrote %q, want it to show %q", out, want)
	}
	if raw := logs("--raw"); !bytes.Contains(raw, []byte("\x1b]0;PWNED\x07\x1b[31mred")) {
		t.Errorf("orch logs --raw wrote %q, want the escapes as written", raw)
	}
	code, stdout, _ := runOrch(t, dir, "logs", "last", "--db", dir+"/.orch/orch.db") // not a terminal
	if code != 0 || !strings.Contains(stdout, "\x1b]0;PWNED\x07") {
		t.Errorf("orch logs into a pipe: exit %d, %q; want the line as written", code, stdout)
	}
}
