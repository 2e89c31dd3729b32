package planfmt

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

var update = flag.Bool("update", false, "rewrite golden files")

func releasePlan(t *testing.T) *planner.Plan { return compilePlan(t, "release.yaml") }

// TestGolden renders the release plan and a plan with fan-outs (for_each)
// in every format.
func TestGolden(t *testing.T) {
	for _, name := range []string{"release", "fanout"} {
		testGolden(t, name, compilePlan(t, name+".yaml"))
	}
}

func compilePlan(t *testing.T, file string) *planner.Plan {
	t.Helper()
	_, p, diags, err := planner.Compile(filepath.Join("testdata", file), "", spec.LoadOptions{})
	if err != nil || p == nil {
		t.Fatalf("compile: %v %v", err, diags)
	}
	return p
}

func testGolden(t *testing.T, name string, p *planner.Plan) {
	for _, tc := range []struct {
		file   string
		render func(*bytes.Buffer, *planner.Plan) error
	}{
		{name + ".txt", func(b *bytes.Buffer, p *planner.Plan) error { return Text(b, p) }},
		{name + ".json", func(b *bytes.Buffer, p *planner.Plan) error { return JSON(b, p) }},
		{name + ".mmd", func(b *bytes.Buffer, p *planner.Plan) error { return Mermaid(b, p) }},
		{name + ".dot", func(b *bytes.Buffer, p *planner.Plan) error { return DOT(b, p) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b, p); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.file)
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update creates it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs:\n%s", tc.file, b.String())
			}
		})
	}
}

// TestRenderingIsStable renders twice from two builds: maps inside the graph
// library must not leak their random order into the output.
func TestRenderingIsStable(t *testing.T) {
	var first string
	for i := 0; i < 5; i++ {
		var b bytes.Buffer
		p := releasePlan(t)
		_ = JSON(&b, p)
		_ = DOT(&b, p)
		_ = Mermaid(&b, p)
		if i == 0 {
			first = b.String()
		} else if b.String() != first {
			t.Fatal("output differs between builds")
		}
	}
}

func TestJSONShape(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, releasePlan(t)); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cuelist", "arbitration", "cues", "edges", "waves", "critical_path", "conflicts", "tools"} {
		if _, ok := out[k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
	c := out["conflicts"].([]any)[0].(map[string]any)
	for _, k := range []string{"conflict_type", "cues_involved", "agents_involved", "resource_in_question", "proposed_resolution", "winner", "suggested_winner", "reason"} {
		if _, ok := c[k]; !ok {
			t.Errorf("conflict lacks %q", k)
		}
	}
}

func TestDOTHasNoWeightNoise(t *testing.T) {
	var b bytes.Buffer
	_ = DOT(&b, releasePlan(t))
	if strings.Contains(b.String(), "weight") {
		t.Error("DOT output mentions weight")
	}
}

// TestRenderingWithoutGraph: a run renders and keeps its plan without the
// library graph (Plan.WithoutGraph); every format gives the same output
// from that copy, arbitration subjects included, and the plan it was made
// from still has its graph.
func TestRenderingWithoutGraph(t *testing.T) {
	p := releasePlan(t)
	render := func(p *planner.Plan) string {
		var b bytes.Buffer
		for _, f := range []func(*bytes.Buffer, *planner.Plan) error{
			func(b *bytes.Buffer, p *planner.Plan) error { return Text(b, p) },
			func(b *bytes.Buffer, p *planner.Plan) error { return JSON(b, p) },
			func(b *bytes.Buffer, p *planner.Plan) error { return Mermaid(b, p) },
			func(b *bytes.Buffer, p *planner.Plan) error { return DOT(b, p) },
		} {
			if err := f(&b, p); err != nil {
				t.Fatal(err)
			}
		}
		return b.String()
	}
	want := render(p)
	light := p.WithoutGraph()
	if got := render(light); got != want {
		t.Errorf("without the graph the renderings differ:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(render(light), `"subject": "db-pool"`) {
		t.Error("the arbitration edge lost its subject")
	}
	if p.Graph == nil || light.Graph != nil {
		t.Errorf("WithoutGraph changed the plan (graph %v) or kept the graph in the copy (%v)", p.Graph, light.Graph)
	}
}
