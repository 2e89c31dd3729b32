package spec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/orch-cli/orch/internal/specgen"
)

// BenchmarkValidate measures Load+Check of generated cuelists: n cues, 3n
// dependency edges, n/10 claiming cues (issue 2's figures). Schemas are
// compiled once per process and excluded (see BenchmarkCompileSchemas).
func BenchmarkValidate(b *testing.B) {
	schemaFor(KindAgent)
	schemaFor(KindCuelist)
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("cues=%d", n), func(b *testing.B) {
			var buf bytes.Buffer
			if err := specgen.Spec(&buf, specgen.Defaults(n)); err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "gen.yaml")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				set, diags, err := Load([]string{path}, LoadOptions{})
				if err != nil {
					b.Fatal(err)
				}
				diags = append(diags, Check(set, CheckOptions{})...)
				if len(diags) != 0 {
					b.Fatalf("generated spec is invalid: %v", diags[0])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/cue")
		})
	}
}

// BenchmarkCycleRing measures finding the one cycle in a ring of 10,000 cues.
func BenchmarkCycleRing(b *testing.B) {
	entries := make([]string, 10000)
	for i := range entries {
		entries[i] = fmt.Sprintf("C%d:C%d", i, (i+1)%len(entries))
	}
	cl := cuelistOf(entries...)
	b.ResetTimer()
	for range b.N {
		if len(NewCueGraph(cl).Cycles()) != 1 {
			b.Fatal("cycle not found")
		}
	}
}

// BenchmarkCompileSchemas is the one-off cost every orch process pays: the
// whole schemas, and (narrowed) the two a generated chain of /bin/true is
// validated against, narrowed to its fields.
func BenchmarkCompileSchemas(b *testing.B) {
	b.Run("narrowed", func(b *testing.B) {
		agent := map[string]any{"agent": map[string]any{"id": "a", "command": []any{"/bin/true"}, "protocol": "none", "concurrency": int64(1)}}
		cues := []any{map[string]any{"id": "C1", "agents": []any{"a"}, "dependencies": []any{"C0"}}}
		cuelist := map[string]any{"cuelist": map[string]any{"id": "c", "max_parallel": int64(1), "cues": cues}}
		defer resetNarrowings()
		for range b.N {
			resetNarrowings()
			for kind, doc := range map[Kind]any{KindAgent: agent, KindCuelist: cuelist} {
				if ks := narrowedSchema(kind, doc); ks.err != nil || ks.keys == nil {
					b.Fatalf("%s: not narrowed (%v)", kind, ks.err)
				}
			}
		}
	})
	for _, kind := range []Kind{KindAgent, KindCuelist, KindMessage} {
		b.Run(string(kind), func(b *testing.B) {
			for range b.N {
				var ks kindSchema
				if ks.compile(kind); ks.err != nil {
					b.Fatal(ks.err)
				}
			}
		})
	}
}
