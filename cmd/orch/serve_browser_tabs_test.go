//go:build browser && linux

package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserTabs: four tabs of one browser on a run's page each render
// the DAG and the inbox, each holding one stream (browsers allow six
// connections to a host across all their tabs: with two streams a tab, the
// fourth tab's requests waited for a connection to close). Moving to
// another view keeps it at one; the server sees one stream per tab.
func TestBrowserTabs(t *testing.T) {
	ctx := browser(t)
	db := filepath.Join(t.TempDir(), "orch.db")
	screensDB(t, db)
	var streams atomic.Int64 // the event streams the server is serving
	count := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/stream") {
				streams.Add(1)
				defer streams.Add(-1)
			}
			next.ServeHTTP(w, r)
		})
	}
	base := serveDBWith(t, db, "", count).URL
	tabs := []context.Context{ctx}
	for range 3 {
		tab, cancel := chromedp.NewContext(ctx)
		t.Cleanup(cancel)
		tabs = append(tabs, tab)
	}
	for i, tab := range tabs {
		// The first action on a tab opens it, for the lifetime of the
		// context it is given: the tab's own, not the timeout's below.
		if err := chromedp.Do(tab); err != nil {
			t.Fatalf("tab %d: %v", i+1, err)
		}
		// A page whose requests wait for a free connection never loads.
		nctx, cancel := context.WithTimeout(tab, time.Minute)
		err := chromedp.Do(nctx, chromedp.Navigate(base+"/#/run/"+releaseID))
		cancel()
		if err != nil {
			t.Fatalf("tab %d did not load (%d streams open on the server): %v", i+1, streams.Load(), err)
		}
	}
	for _, tab := range tabs {
		waitJS(t, tab, "the DAG", `document.querySelectorAll("svg.dag [data-cue]").length === 8`, time.Minute)
		waitJS(t, tab, "the inbox", `document.querySelector("#inbox li.k-question")`, time.Minute)
		waitJS(t, tab, "the timeline, from the run's events", `document.querySelectorAll(".timeline .bar").length === 6`, time.Minute)
		waitJS(t, tab, "one stream", `document.documentElement.dataset.streams === "1"`, time.Minute)
	}
	// Another view, then back: still one stream, the run's events again.
	last := tabs[len(tabs)-1]
	for _, hash := range []string{"#/", "#/run/c4e2b9a1f036", "#/run/" + releaseID} {
		if _, err := chromedp.Run(last, chromedp.Evaluate[string](`location.hash = "`+hash+`"`)); err != nil {
			t.Fatal(err)
		}
		view := "run"
		if hash == "#/" {
			view = "runs"
		}
		waitJS(t, last, hash+" rendered", `window.orchRendered && window.orchRendered.view === "`+view+`" && location.hash === "`+hash+`"`, time.Minute)
		if got := evalString(t, last, `String(document.documentElement.dataset.streams)`); got != "1" {
			t.Errorf("on %s the page holds %s streams, want 1", hash, got)
		}
	}
	waitJS(t, last, "the timeline again", `document.querySelectorAll(".timeline .bar").length === 6`, time.Minute)
	deadline := time.Now().Add(time.Minute)
	for streams.Load() != int64(len(tabs)) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := streams.Load(); n != int64(len(tabs)) {
		t.Errorf("the server serves %d streams to %d tabs", n, len(tabs))
	}
}
