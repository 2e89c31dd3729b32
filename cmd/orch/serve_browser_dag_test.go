//go:build browser && linux

package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// dagCue is what the page's DAG draws of a cue: its id and the cues it
// waits for (record.CueInfo's After).
type dagCue struct {
	ID    string   `json:"id"`
	After []string `json:"after,omitempty"`
}

// exampleDAGs is every bundled example's cuelists as the page gets them.
func exampleDAGs(t *testing.T) map[string][]dagCue {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*", "cuelist*.yaml"))
	if len(files) == 0 {
		t.Fatal("no examples/*/cuelist*.yaml")
	}
	out := map[string][]dagCue{}
	for _, f := range files {
		_, p, diags, err := planner.Compile(f, "", spec.LoadOptions{})
		if err != nil || diags.HasErrors() || p == nil {
			t.Fatalf("%s: %v %v", f, err, diags)
		}
		var cues []dagCue
		for _, c := range p.Order {
			cues = append(cues, dagCue{ID: c.ID, After: c.WaitsFor()})
		}
		out[strings.TrimPrefix(f, filepath.Join("..", "..")+string(os.PathSeparator))] = cues
	}
	return out
}

// generatedDAG is n cues in about n/10 layers, each waiting for up to
// three earlier cues, often several layers back (the long edges that once
// went through other cues' boxes), and a last cue that waits for every
// tenth.
func generatedDAG(n int, seed int64) []dagCue {
	rng := rand.New(rand.NewSource(seed))
	cues := make([]dagCue, n)
	for i := range cues {
		cues[i].ID = fmt.Sprintf("C%03d", i)
		for k := 0; i > 0 && k < 1+rng.Intn(3); k++ {
			cues[i].After = append(cues[i].After, cues[rng.Intn(i)].ID)
		}
	}
	last := &cues[n-1]
	for i := 0; i < n-1; i += 10 {
		last.After = append(last.After, cues[i].ID)
	}
	return cues
}

// crossingsJS draws a DAG with the page's own dag.js and walks every edge
// in steps of 2px, counting the points strictly inside a cue's box or
// outside the picture.
const crossingsJS = `(async (cues) => {
  const m = await import("./assets/dag.js");
  const d = m.drawDAG(cues, () => {});
  document.body.appendChild(d.svg);
  const L = d.layout, s = L.size;
  const inside = (x, y) => L.nodes.filter((nd) => x > nd.x + 0.5 && x < nd.x + s.w - 0.5 && y > nd.y + 0.5 && y < nd.y + s.h - 0.5).map((nd) => nd.cue.id);
  const bad = [];
  let points = 0;
  for (const path of d.svg.querySelectorAll("path.edges")) {
    for (const part of (path.getAttribute("d") || "").split("M").filter(Boolean)) {
      const one = document.createElementNS("http://www.w3.org/2000/svg", "path");
      one.setAttribute("d", "M" + part);
      d.svg.appendChild(one);
      const len = one.getTotalLength();
      for (let at = 0; at <= len; at += 2) {
        const p = one.getPointAtLength(at);
        points++;
        const hit = inside(p.x, p.y);
        if (p.x < 0 || p.y < 0 || p.x > L.width || p.y > L.height) hit.push("nothing: outside the picture (" + L.width + "x" + L.height + ")");
        if (hit.length && bad.length < 5) bad.push("M" + part.slice(0, 60) + "… at (" + p.x.toFixed(1) + "," + p.y.toFixed(1) + ") inside " + hit.join(","));
      }
      one.remove();
    }
  }
  d.svg.remove();
  return JSON.stringify({points: points, edges: L.edges.length, bad: bad});
})`

// TestBrowserDAGEdgesAvoidNodes: no edge of the run's DAG passes through a
// cue's box or leaves the picture — in every bundled example and in a generated 500-cue layout
// full of edges that skip layers (an edge once went straight through the
// cues of the layers it skipped: ASK -> PUBLISH through ANALYZE).
func TestBrowserDAGEdgesAvoidNodes(t *testing.T) {
	ctx := browser(t)
	base := serveDB(t, newDB(t), "").URL
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/")); err != nil {
		t.Fatal(err)
	}
	cases := exampleDAGs(t)
	cases["ASK -> PUBLISH past ANALYZE"] = []dagCue{{ID: "FETCH"}, {ID: "ASK", After: []string{"FETCH"}},
		{ID: "ANALYZE", After: []string{"FETCH"}}, {ID: "CHECK", After: []string{"ANALYZE"}},
		{ID: "PUBLISH", After: []string{"ASK", "CHECK"}}}
	cases["generated 500 cues"] = generatedDAG(500, 1)
	cases["generated 120 cues"] = generatedDAG(120, 2)
	for name, cues := range cases {
		in, _ := json.Marshal(cues)
		res, err := chromedp.Run(ctx, chromedp.Evaluate[string](crossingsJS+`(`+string(in)+`)`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got struct {
			Points, Edges int
			Bad           []string
		}
		if err := json.Unmarshal([]byte(res), &got); err != nil {
			t.Fatalf("%s: %v: %s", name, err, res)
		}
		if got.Points == 0 && got.Edges > 0 {
			t.Errorf("%s: %d edges but no point walked", name, got.Edges)
		}
		if len(got.Bad) > 0 {
			t.Errorf("%s (%d cues, %d edges): edges cross cues' boxes:\n%s", name, len(cues), got.Edges, strings.Join(got.Bad, "\n"))
		}
		t.Logf("%s: %d cues, %d edges, %d points walked", name, len(cues), got.Edges, got.Points)
	}
}
