//go:build browser && linux

package main

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestBrowserMoney: the page prints money as orch does everywhere, to the
// cent or to 4 significant digits under a cent (record.FormatUSD), never
// the float as the agent summed it.
func TestBrowserMoney(t *testing.T) {
	ctx := browser(t)
	db := filepath.Join(t.TempDir(), "orch.db")
	w, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, cost := range []float64{0.029849999999999998, 0.004321} {
		r := &recording{run: []string{"m00000000001", "m00000000002"}[i], at: fixtureStart.Add(time.Duration(i) * time.Hour)}
		r.start("costly", "CODE")
		r.cue("CODE", time.Second, "completed")
		r.add(time.Millisecond, record.Event{Type: record.EvUsage, Cue: "CODE", Agent: "worker", Attempt: 1,
			Data: record.UsageData{CostUSD: cost, RunCostUSD: cost}})
		r.end("completed", "")
		r.save(t, w)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.Close()
	base := serveDB(t, db, "").URL
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the runs", `document.querySelectorAll("td.c-cost").length === 2`, time.Minute)
	if got := evalString(t, ctx, `[...document.querySelectorAll("td.c-cost")].map(td => td.textContent).join(" ")`); got != "$0.004321 $0.03" {
		t.Errorf("the runs' costs: %q, want \"$0.004321 $0.03\"", got)
	}
	for _, usd := range []float64{0, 0.5, 12.345, 0.0123, 0.0043216, 0.005, 0.00001234, 0.009996, 0.0099996} {
		js, err := chromedp.Run(ctx, chromedp.Evaluate[string](`import("./assets/util.js").then((m) => m.money(`+strconv.FormatFloat(usd, 'g', -1, 64)+`))`, chromedp.EvalAwaitPromise))
		if want := record.FormatUSD(usd); err != nil || js != want {
			t.Errorf("util.js money(%v) = %s (%v), want %s as record.FormatUSD", usd, js, err, want)
		}
	}
}
