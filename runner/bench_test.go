package runner_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/orch-cli/orch/internal/specgen"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

func compileGenerated(b *testing.B, o specgen.Options) *planner.Plan {
	b.Helper()
	var buf bytes.Buffer
	if err := specgen.Spec(&buf, o); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "cuelist.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	_, p, diags, err := planner.Compile(path, "", spec.LoadOptions{})
	if err != nil || p == nil {
		b.Fatalf("compile: %v %v", err, diags)
	}
	return p
}

func runOnce(b *testing.B, p *planner.Plan) {
	b.Helper()
	db, err := store.Open(filepath.Join(b.TempDir(), "orch.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	res, err := runner.Run(context.Background(), runner.Options{Plan: p, Recorder: db, DBPath: db.Path()})
	if err != nil || res.State != runner.RunCompleted {
		if res != nil {
			if d, _ := db.Run(context.Background(), res.RunID); d != nil {
				for _, c := range d.Cues {
					if c.State == runner.CueFailed {
						b.Logf("%s: %s", c.ID, c.Reason)
						for _, a := range c.Attempts {
							b.Logf("  attempt %d %s %s %s", a.Number, a.State, a.Class, a.Reason)
						}
					}
				}
			}
		}
		b.Fatalf("run: %v %+v", err, res)
	}
}

// BenchmarkRunIndependent: 1,000 independent cues running /bin/true, two at
// a time (compare with go run ./bench/spawn -n 1000 -p 2).
func BenchmarkRunIndependent(b *testing.B) {
	o := specgen.Options{Cues: 1000, Agents: 1, Command: "/bin/true", Protocol: "none", Independent: true, MaxParallel: 2, NoProvides: true, Seed: 1}
	p := compileGenerated(b, o)
	b.ResetTimer()
	for range b.N {
		runOnce(b, p)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "µs/cue")
}

// BenchmarkRunChain: 200 cues each depending on the one before.
func BenchmarkRunChain(b *testing.B) {
	o := specgen.Options{Cues: 200, Agents: 1, Command: "/bin/true", Protocol: "none", Chain: true, MaxParallel: 1, NoProvides: true, Seed: 1}
	p := compileGenerated(b, o)
	b.ResetTimer()
	for range b.N {
		runOnce(b, p)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/200, "µs/cue")
}
