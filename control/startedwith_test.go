//go:build unix

package control

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/orch-cli/orch/internal/testfs"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// A run started here commits the fingerprints of its cues' definitions with
// its start, and its observer sees them with every other event it commits:
// the seqs it sees have no gap, so orch run's progress display reads
// nothing back from the store (a gap is another process's events, read
// from the store before the next event is shown).
func TestStartedRunObservesEveryEvent(t *testing.T) {
	dir := testfs.Write(t, map[string]string{"cuelist.yaml": `cuelist:
  id: one
  cues:
    - {id: A, agents: [a]}
---
agent: {id: a, command: ["true"], protocol: none}
`}, 0o644)
	compiled, err := Compile(filepath.Join(dir, "cuelist.yaml"), "", spec.LoadOptions{})
	if err != nil || compiled.Plan == nil {
		t.Fatalf("compile: %v %v", err, compiled)
	}
	ctl := New(Config{DB: filepath.Join(dir, "orch.db")})
	defer ctl.Close()
	ctx := context.Background()
	x, err := ctl.Start(ctx, StartRequest{Compiled: compiled})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var mu sync.Mutex
	var seen []record.Event
	x.Options.Observe = func(e record.Event) {
		mu.Lock()
		seen = append(seen, e)
		mu.Unlock()
	}
	res, err := runner.Run(ctx, x.Options)
	if err != nil || res.State != record.RunCompleted {
		t.Fatalf("run: %v %+v", err, res)
	}
	stored, err := x.DB.Events(ctx, res.RunID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, e := range seen {
		if e.Seq != int64(i+1) {
			t.Fatalf("the observer saw seq %d (%s) after %d events: a gap the display would read from the store", e.Seq, e.Type, i)
		}
	}
	if len(seen) != len(stored) {
		t.Fatalf("the observer saw %d events, the store has %d", len(seen), len(stored))
	}
	i := slices.IndexFunc(seen, func(e record.Event) bool { return e.Type == record.EvCueSpecs })
	if i != 1 {
		t.Fatalf("the cue specs are event %d of those seen, want 1 (right after run/started)", i)
	}
	if h, ok := seen[i].Data.(record.CueSpecsData); !ok || h.Hashes["A"] == "" || seen[i].RunID != res.RunID {
		t.Fatalf("cue specs event: %+v", seen[i])
	}
	recorded, err := recordedCueHashes(ctx, x.DB, res.RunID)
	if err != nil || recorded["A"] != cueSpecHashes(compiled.Plan)["A"] {
		t.Fatalf("recorded fingerprints %v (%v), want A's %s", recorded, err, cueSpecHashes(compiled.Plan)["A"])
	}
}
