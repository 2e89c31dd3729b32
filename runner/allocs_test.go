//go:build unix

package runner_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/orch-cli/orch/internal/specgen"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestChainedCueAllocations: what a chained cue of /bin/true allocates in
// the whole run, with the store — the loop's decisions, their events on
// their way to the store, the commit, the attempt and its process. Every
// allocation is CPU on the chain's critical path (and garbage to collect);
// the figure is the difference between a long and a short chain, so the
// run's start and end do not count.
func TestChainedCueAllocations(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("runs 160 processes; the race detector allocates more")
	}
	const short, long = 40, 160
	perCue := (chainMallocs(t, long) - chainMallocs(t, short)) / (long - short)
	const most = 300 // 317–323 before the cuts of issue 34 (s40), 279–285 after
	if perCue > most {
		t.Errorf("a chained cue made %d allocations, want at most %d", perCue, most)
	}
	t.Logf("%d allocations per chained cue", perCue)
}

// chainMallocs runs a chain of n cues of /bin/true on a new store and
// returns how many allocations the run made.
func chainMallocs(t *testing.T, n int) int {
	t.Helper()
	dir := t.TempDir()
	p := compileGenerated(t, specgen.Options{Cues: n, Agents: 1, Command: "/bin/true", Protocol: "none", Chain: true, MaxParallel: 1, NoProvides: true, Seed: 1})
	db, err := store.Open(filepath.Join(dir, "orch.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := runner.Run(context.Background(), runner.Options{Plan: p, Recorder: db, DBPath: db.Path()})
	runtime.ReadMemStats(&after)
	if err != nil || res.State != record.RunCompleted {
		t.Fatalf("run: %v %+v", err, res)
	}
	return int(after.Mallocs - before.Mallocs)
}
