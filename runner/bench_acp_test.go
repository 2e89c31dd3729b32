//go:build unix

package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/orch-cli/orch/internal/fakeacp"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

// With ORCH_FAKE_ACP=1 the test binary is the fake ACP agent
// (internal/fakeacp) instead of the tests.
func init() {
	if os.Getenv("ORCH_FAKE_ACP") == "1" {
		os.Exit(fakeacp.Main(os.Args[1:]))
	}
}

// BenchmarkDriverOverhead runs 500 cues of an agent that answers at once,
// max_parallel 1, once per protocol: jsonl (coord.go -> task.complete) and
// acp (session/new, then a session/prompt turn with a tool call, a plan and
// three message chunks, outputs from the reply's JSON). Per cue, from the
// cues' recorded states:
//   - go-ms: GO to completed, the turn and its outputs recorded;
//   - e2e-ms: WARNING to completed, which also holds STANDBY (session/new
//     for acp) and the wait of a cue warned early for the max_parallel slot.
//
// One process per agent serves every cue, for both: the first cue's
// initialize (acp) is in its WARNING.
func BenchmarkDriverOverhead(b *testing.B) {
	if os.Getenv("GOGC") == "" { // as orch run sets it (cmd/orch/gc.go)
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	for _, protocol := range []string{"jsonl", "acp"} {
		b.Run("protocol="+protocol, func(b *testing.B) { benchDriver(b, protocol) })
	}
}

func benchDriver(b *testing.B, protocol string) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var yaml bytes.Buffer
	switch protocol {
	case "jsonl":
		fmt.Fprintf(&yaml, "agent: {id: fast, protocol: jsonl, command: [%q, ok], concurrency: 4, env: {ORCH_FAKE_AGENT: \"1\"}}\n---\n", self)
	case "acp":
		fmt.Fprintf(&yaml, "agent: {id: fast, protocol: acp, command: [%q, ok], concurrency: 4, provides: [text, summary], env: {ORCH_FAKE_ACP: \"1\"}}\n---\n", self)
	}
	const n = 500
	fmt.Fprintf(&yaml, "cuelist:\n  id: driver\n  max_parallel: 1\n  cues:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&yaml, "    - {id: C%d, agents: [fast]}\n", i)
	}
	path := filepath.Join(b.TempDir(), "cuelist.yaml")
	if err := os.WriteFile(path, yaml.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	_, p, diags, err := planner.Compile(path, "", spec.LoadOptions{})
	if err != nil || p == nil {
		b.Fatalf("compile: %v %v", err, diags)
	}
	var turn, e2e []time.Duration
	b.ResetTimer()
	for range b.N {
		db, err := store.Open(filepath.Join(b.TempDir(), "orch.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := runner.Run(context.Background(), runner.Options{Plan: p, Recorder: db, DBPath: db.Path(), ProjectRoot: filepath.Dir(path)})
		if err != nil || res.State != record.RunCompleted {
			b.Fatalf("run: %v %+v", err, res)
		}
		b.StopTimer()
		events, err := db.Events(context.Background(), res.RunID, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		warned, went := map[string]time.Time{}, map[string]time.Time{}
		for _, e := range events {
			if e.Type != record.EvCueState {
				continue
			}
			switch record.CueState(e.State) {
			case record.CueWarning:
				warned[e.Cue] = e.At
			case record.CueGo:
				went[e.Cue] = e.At
			case record.CueCompleted:
				turn = append(turn, e.At.Sub(went[e.Cue]))
				e2e = append(e2e, e.At.Sub(warned[e.Cue]))
			}
		}
		db.Close()
		b.StartTimer()
	}
	if len(turn) != n*b.N {
		b.Fatalf("%d cues completed, want %d", len(turn), n*b.N)
	}
	report := func(ds []time.Duration, unit string) {
		b.ReportMetric(float64(percentile(ds, 50).Microseconds())/1000, unit+"-median")
		b.ReportMetric(float64(percentile(ds, 99).Microseconds())/1000, unit+"-p99")
	}
	report(turn, "go-ms")
	report(e2e, "e2e-ms")
}
