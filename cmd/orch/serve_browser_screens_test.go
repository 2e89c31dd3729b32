//go:build browser && linux

package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// goldenTolerance is the mean difference allowed between a screenshot and
// its golden, both reduced to 32x24 grey levels (0-255): times, ids and
// antialiasing move it by a few levels, a broken layout by far more.
const goldenTolerance = 6.0

// TestBrowserScreens takes the runs page and a run's page (the cue panel of
// TEST-E2E open) at 1280 and 480 pixels wide and compares them loosely to
// testdata/screens/web (ORCH_UPDATE_GOLDEN=1 or -update rewrites them).
func TestBrowserScreens(t *testing.T) {
	ctx := browser(t)
	db := filepath.Join(t.TempDir(), "orch.db")
	screensDB(t, db)
	base := serveDB(t, db, "").URL
	for _, width := range []int64{1280, 480} {
		w := itoa(int(width))
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		navigate(t, ctx, base+"/#/", "runs")
		settled(t, ctx)
		screen(t, ctx, "runs-"+w+".png")

		navigate(t, ctx, base+"/#/run/"+releaseID, "run")
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`svg.dag [data-cue="TEST-E2E"]`))); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, "the panel", `document.querySelector(".panel ol.attempts") && document.querySelector(".panel table.board, .panel section p.muted")`, time.Minute)
		waitJS(t, ctx, "the timeline", `document.querySelectorAll(".timeline .bar").length === 6`, time.Minute)
		waitJS(t, ctx, "the critical path", `document.querySelectorAll("svg.dag .crit").length > 0`, time.Minute)
		if got := evalString(t, ctx, `Array.from(document.querySelectorAll("svg.dag .node.crit")).map((n) => n.getAttribute("data-cue")).join(" ")`); got != "BUILD TEST-E2E" {
			t.Errorf("critical path %q, want BUILD TEST-E2E (the longest attempts)", got)
		}
		if got := evalString(t, ctx, `String(document.querySelector("button.retry").hidden)`); got != "false" {
			t.Errorf("a failed run has no Retry button")
		}
		settled(t, ctx)
		screen(t, ctx, "run-"+w+".png")
	}
}

// settled waits for what arrives last on a page: the live feed (the
// global stream, the badge says "live") and the inbox it refreshes.
func settled(t *testing.T, ctx context.Context) {
	t.Helper()
	waitJS(t, ctx, "the live feed", `document.getElementById("live").textContent === "live"`, time.Minute)
	waitJS(t, ctx, "the inbox", `document.querySelector("#inbox li.k-question")`, time.Minute)
}

// navigate loads url afresh (not a hash change) and waits until the page
// says view has rendered.
func navigate(t *testing.T, ctx context.Context, url, view string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, view+" rendered", `window.orchRendered && window.orchRendered.view === "`+view+`"`, 30*time.Second)
}

func screen(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	time.Sleep(500 * time.Millisecond) // the last debounced redraws
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "screens", "web", name)
	if *update || os.Getenv("ORCH_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Errorf("%v (ORCH_UPDATE_GOLDEN=1 writes it)", err)
		return
	}
	d, err := screenDiff(shot, want)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Logf("%s: mean difference %.2f grey levels", name, d)
	if d > goldenTolerance {
		got := filepath.Join(t.TempDir(), name)
		_ = os.WriteFile(got, shot, 0o644)
		t.Errorf("%s differs from its golden by %.2f grey levels (> %.0f); the screenshot is %s", name, d, goldenTolerance, got)
	}
}

// screenDiff is the mean absolute difference of two PNGs reduced to 32x24
// grey levels.
func screenDiff(a, b []byte) (float64, error) {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, err
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	ga, gb := thumb(ia), thumb(ib)
	sum := 0.0
	for i := range ga {
		sum += math.Abs(ga[i] - gb[i])
	}
	return sum / float64(len(ga)), nil
}

// thumb averages the image's grey levels over a 32x24 grid.
func thumb(img image.Image) []float64 {
	const W, H = 32, 24
	out := make([]float64, W*H)
	n := make([]float64, W*H)
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			grey := (0.299*float64(cr) + 0.587*float64(cg) + 0.114*float64(cb)) / 257
			k := (y-r.Min.Y)*H/r.Dy()*W + (x-r.Min.X)*W/r.Dx()
			out[k] += grey
			n[k]++
		}
	}
	for k := range out {
		if n[k] > 0 {
			out[k] /= n[k]
		}
	}
	return out
}

// TestBrowserPerf measures, in the browser, the time from navigation to
// the rendered runs page (1,000 runs and more) and the rendered page of a
// run of 10,000 cues (100 layers of 100, two dependencies each).
func TestBrowserPerf(t *testing.T) {
	ctx := browser(t)
	db := filepath.Join(t.TempDir(), "orch.db")
	perfDB(t, db, 1000, 100, 100)
	base := serveDB(t, db, "").URL
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	measure := func(what, url, view, check string) {
		t.Helper()
		navigate(t, ctx, url, view)
		ms := evalString(t, ctx, `String(window.orchRendered.ms.toFixed(0))`)
		if f := evalString(t, ctx, `String((window.orchRendered.fetched || 0).toFixed(0))`); f != "0" {
			t.Logf("%s: the run's status was in after %s ms", what, f)
		}
		got := evalString(t, ctx, check)
		t.Logf("%s: rendered %s ms after navigation (%s)", what, ms, got)
		if n, _ := time.ParseDuration(ms + "ms"); n > 30*time.Second {
			t.Errorf("%s took %s ms to render", what, ms)
		}
	}
	for _, path := range []string{"/api/runs", "/api/runs/big000000000"} {
		start := time.Now()
		_, body := get(t, base+path)
		t.Logf("GET %s from Go: %d bytes in %v (the server's part)", path, len(body), time.Since(start).Round(time.Millisecond))
	}
	measure("runs page, 1,001 runs", base+"/#/", "runs", `document.querySelectorAll("table.runs tbody tr").length + " rows"`)
	measure("run page, 10,000 cues", base+"/#/run/big000000000", "run",
		`document.querySelectorAll("svg.dag [data-cue]").length + " nodes, " + (document.querySelector("svg.dag path.edges").getAttribute("d").match(/M/g) || []).length + " edges"`)
	waitJS(t, ctx, "every event replayed (the timeline)", `document.querySelector(".timeline p") && /10000 attempts/.test(document.querySelector(".timeline p").textContent)`, 2*time.Minute)
}
