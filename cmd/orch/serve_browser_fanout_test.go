//go:build browser && linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// fanOutCuelist: PLAN lists four tasks; FAN takes one each (on_failure:
// continue): FAN[0] and FAN[1] complete, FAN[2] fails, FAN[3] waits for a
// file; REVIEW comes after FAN.
const fanOutCuelist = `cuelist:
  id: fanout
  defaults: {timeout: 5m}
  cues:
    - {id: PLAN, agents: [plan]}
    - {id: FAN, agents: [work], dependencies: [PLAN], for_each: {from: PLAN.tasks, on_failure: continue}}
    - {id: REVIEW, agents: [plan], dependencies: [FAN]}
---
agent:
  id: plan
  run: echo 'tasks=["a", "b", "c", "d"]' >> "$ORCH_OUTPUT"
  provides: [tasks]
---
agent:
  id: work
  concurrency: 4
  run: |
    case "$ORCH_ITEM" in
      '"c"') exit 1;;
      '"d"') i=0; while [ ! -e release ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done;;
    esac
`

// TestBrowserFanOut: the run's DAG draws a fan-out as one node with its
// items' counts (done, failed, running, of all), live; a click opens it
// into its items, each a node after it with REVIEW after them (the
// fan-in), coloured by its state as it changes; a second click closes it.
func TestBrowserFanOut(t *testing.T) {
	ctx := browser(t)
	db := newDB(t)
	base := serveDB(t, db, "").URL

	run := startRun(t, fanOutCuelist, db)

	// The run's page, once FAN has its items: one node for FAN, with its
	// counts, and no node for an item.
	deadline := time.Now().Add(time.Minute)
	runID := ""
	for runID == "" && time.Now().Before(deadline) {
		if _, body := get(t, base+"/api/runs/last"); strings.Contains(body, `"FAN[3]"`) {
			runID = textBetween(body, `"id": "`, `"`)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if runID == "" {
		t.Fatalf("FAN never expanded:\n%s", run.out.String())
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/run/"+runID)); err != nil {
		t.Fatal(err)
	}
	counts := `document.querySelector('svg.dag [data-fanout="FAN"] text.counts').textContent`
	waitJS(t, ctx, "FAN's counts: 2 done, 1 failed, 1 running of 4", counts+` === "2\u2713 1\u2717 1\u25b6 /4"`, time.Minute)
	if n := evalString(t, ctx, `String(document.querySelectorAll("svg.dag [data-cue]").length)`); n != "3" {
		t.Errorf("the closed DAG draws %s nodes, want 3 (PLAN, FAN, REVIEW)", n)
	}
	edges := `String((document.querySelector("svg.dag path.edges").getAttribute("d").match(/M/g) || []).length)`
	if n := evalString(t, ctx, edges); n != "2" {
		t.Errorf("the closed DAG has %s edges, want 2", n)
	}

	// Opened: a node per item, FAN -> each item -> REVIEW.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`svg.dag [data-fanout="FAN"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "FAN's items drawn", `document.querySelectorAll("svg.dag [data-cue]").length === 7`, time.Minute)
	if n := evalString(t, ctx, edges); n != "9" {
		t.Errorf("the open DAG has %s edges, want 9 (PLAN->FAN, FAN->4 items, 4 items->REVIEW)", n)
	}
	node := func(cue string) string {
		return `document.querySelector('svg.dag [data-cue="` + cue + `"]').getAttribute("class")`
	}
	for cue, phase := range map[string]string{"FAN[0]": "s-completed", "FAN[2]": "s-failed", "FAN[3]": "s-go"} {
		waitJS(t, ctx, cue+" "+phase, node(cue)+`.includes("`+phase+`")`, time.Minute)
	}

	// The last item completes: its node turns live, FAN's counts follow and
	// FAN fails (one item failed).
	if err := os.WriteFile(filepath.Join(run.dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "FAN[3] completed", node("FAN[3]")+`.includes("s-completed")`, time.Minute)
	waitJS(t, ctx, "FAN's final counts", counts+` === "3\u2713 1\u2717 /4"`, time.Minute)
	waitJS(t, ctx, "FAN failed", node("FAN")+`.includes("s-failed")`, time.Minute)

	// Closed again.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`svg.dag [data-fanout="FAN"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "FAN closed", `document.querySelectorAll("svg.dag [data-cue]").length === 3`, time.Minute)
	select {
	case <-run.exited:
	case <-time.After(time.Minute):
		t.Fatalf("orch run did not end\n%s", run.out.String())
	}
}

// textBetween is the text of s after the first before, up to the next after.
func textBetween(s, before, after string) string {
	_, rest, ok := strings.Cut(s, before)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, after)
	return v
}
