//go:build linux || darwin

package main

import (
	"strings"
	"testing"
)

// TestStreamWrapsUnderPty: orch run --stream in a real 40-column terminal
// wraps an agent's long line under its "CUE agent |" prefix; every word is
// on the screen (they were cut at the terminal's width).
func TestStreamWrapsUnderPty(t *testing.T) {
	dir := writeFiles(t, map[string]string{"cuelist.yaml": `agent:
  id: talk
  run: echo "compiling the first package, then the second one, and finally the last"
---
cuelist:
  id: wrap
  cues:
    - {id: BUILD, agents: [talk]}
`})
	p := startPty(t, dir, 40, 20, "run", "--stream", "cuelist.yaml")
	if code := p.exit(); code != 0 {
		t.Fatalf("orch run exited %d:\n%s", code, p.screen())
	}
	screen := p.screen()
	want := strings.Join([]string{
		"BUILD talk | compiling the first",
		"             package, then the second",
		"             one, and finally the last",
	}, "\n")
	if !strings.Contains(screen, want) {
		t.Errorf("the streamed line is not wrapped under its prefix; want\n%s\nscreen:\n%s", want, screen)
	}
}
