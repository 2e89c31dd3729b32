//go:build linux || darwin

package main

import (
	"bytes"
	"testing"
)

// A manual cue asking for GO on a terminal rings its bell.
func TestLiveBellWhenNeeded(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"cuelist.yaml": liveCuelist})
	p := startPty(t, dir, 80, 30, "run", "cuelist.yaml")
	p.waitScreen("[y/N]", "left#", "right#")
	if !bytes.Contains(p.output(0), []byte("\a")) {
		t.Error("no bell when a person was needed")
	}
	p.typeKeys("\x03")
	p.exit()
}
