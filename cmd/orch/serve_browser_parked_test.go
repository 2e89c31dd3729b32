//go:build browser && linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserTimelineManualGo: a cue with go: manual pauses the run; the
// timeline shows its prepared attempt paused (not a purple stopped bar),
// and after orch go that one attempt completes: one bar per cue, none
// stopped (issue 33, item 3).
func TestBrowserTimelineManualGo(t *testing.T) {
	ctx := browser(t)
	db := newDB(t)
	base := serveDBAs(t, db, "", true, nil).URL
	run := startRun(t, `
cuelist:
  id: manual
  cues:
    - {id: BUILD, agents: [quick]}
    - {id: SHIP, agents: [quick], dependencies: [BUILD], go: manual}
---
agent:
  id: quick
  command: [sh, -c, 'true']
`, db)
	select {
	case <-run.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("orch run did not pause\n%s", run.out.String())
	}
	if e, ok := run.err.(*exec.ExitError); !ok || e.ExitCode() != 3 {
		t.Fatalf("orch run: %v, want exit 3 (paused)\n%s", run.err, run.out.String())
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/run/last")); err != nil {
		t.Fatal(err)
	}
	bar := func(cue string) string {
		return `(document.querySelector('.timeline .trow[data-cue="` + cue + `"] .bar') || {}).className`
	}
	waitJS(t, ctx, "SHIP's attempt paused", bar("SHIP")+` === "bar s-paused"`, time.Minute)

	cmd := exec.Command(filepath.Join(binaries(t), "orch"), "go", "last", "SHIP")
	cmd.Dir, cmd.Env = run.dir, append(os.Environ(), "ORCH_DB="+db, "NO_COLOR=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("orch go: %v\n%s", err, out)
	}
	waitJS(t, ctx, "SHIP's attempt completed, live", bar("SHIP")+` === "bar s-completed"`, time.Minute)
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the timeline again", bar("SHIP")+` === "bar s-completed"`, time.Minute)
	got := evalString(t, ctx, `Array.from(document.querySelectorAll(".timeline .trow")).map((r) => r.textContent + " " + r.querySelector(".bar").className).join("; ")`)
	if got != "BUILD · quick #1 bar s-completed; SHIP · quick #1 bar s-completed" || strings.Contains(got, "stopped") {
		t.Errorf("the timeline after orch go: %s, want one completed bar for each cue", got)
	}
}
