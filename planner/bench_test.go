package planner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/orch-cli/orch/internal/specgen"
	"github.com/orch-cli/orch/spec"
)

func loadGenerated(b *testing.B, o specgen.Options) (*spec.Set, *spec.Cuelist) {
	b.Helper()
	var buf bytes.Buffer
	if err := specgen.Spec(&buf, o); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "gen.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	set, diags, err := spec.Load([]string{path}, spec.LoadOptions{})
	if err != nil || diags.HasErrors() {
		b.Fatalf("load: %v %v", err, diags)
	}
	return set, set.Cuelists[0]
}

// BenchmarkBuild measures planner.Build on generated cuelists: n cues, 3n
// dependency edges, n/10 cues claiming one of 10 resources of capacity 2.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("cues=%d", n), func(b *testing.B) {
			set, cl := loadGenerated(b, specgen.Defaults(n))
			b.ReportAllocs()
			b.ResetTimer()
			var p *Plan
			for range b.N {
				var diags spec.Diagnostics
				if p, diags = Build(set, cl); diags.HasErrors() || p == nil {
					b.Fatalf("build: %v", diags)
				}
			}
			b.ReportMetric(float64(len(p.Conflicts)), "conflicts")
		})
	}
}

// BenchmarkBuildOneAgent is the worst case for arbitration: every cue targets
// one agent that serves one cue at a time, so all 10,000 are one bucket.
func BenchmarkBuildOneAgent(b *testing.B) {
	o := specgen.Defaults(10000)
	o.Agents = 1
	o.OneAtATime = true
	set, cl := loadGenerated(b, o)
	b.ResetTimer()
	for range b.N {
		if p, diags := Build(set, cl); diags.HasErrors() || p == nil {
			b.Fatalf("build: %v", diags)
		}
	}
}

// BenchmarkCheck is what `orch validate` adds to the spec checks.
func BenchmarkCheck(b *testing.B) {
	set, _ := loadGenerated(b, specgen.Defaults(10000))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if diags := Check(set); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}
