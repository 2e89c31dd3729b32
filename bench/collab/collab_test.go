// Package collab measures agent collaboration end to end (issue 6): real
// runs, the real SQLite store, jsonl agents built on protocols/agent (this
// test binary, re-executed). Run with
//
//	go test ./bench/collab -run '^$' -bench . -benchtime 2000x
//
// Each benchmark reports its figures as metrics; b.N is the number of
// operations inside one run.
package collab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols/agent"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

func TestMain(m *testing.M) {
	if role := os.Getenv("BENCH_AGENT"); role != "" {
		agent.Run(roles[role])
		return
	}
	os.Exit(m.Run())
}

var roles = map[string]agent.Handler{
	// pingpong writes a key and reads it back, n times, timing each.
	"pingpong": func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		n, _ := strconv.Atoi(t.Input("n"))
		writes, reads, visible := make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
		for i := range n {
			start := time.Now()
			if _, err := t.BlackboardWrite(ctx, "k", i); err != nil {
				return nil, err
			}
			acked := time.Now()
			v, _, _, _, err := t.BlackboardRead(ctx, "k")
			if err != nil || v != float64(i) {
				return nil, fmt.Errorf("read %v after writing %d: %v", v, i, err)
			}
			writes[i], reads[i], visible[i] = acked.Sub(start), time.Since(acked), time.Since(start)
		}
		return map[string]any{"write": stats(writes), "read": stats(reads), "visible": stats(visible)}, nil
	},
	// flood sends n writes of distinct keys from 64 goroutines at once: the
	// requests are pipelined on the agent's stdout.
	"flood": func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		n, _ := strconv.Atoi(t.Input("n"))
		const workers = 64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		start := time.Now()
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += workers {
					if _, err := t.BlackboardWrite(ctx, "key-"+strconv.Itoa(i), i); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return nil, err
		}
		return map[string]any{"seconds": time.Since(start).Seconds()}, nil
	},
	// parent hands off to child n times, one after the other.
	"parent": func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		n, _ := strconv.Atoi(t.Input("n"))
		for i := range n {
			res, err := t.Handoff(ctx, "child", "T"+strconv.Itoa(i), map[string]any{"i": i})
			if err != nil || res.Status != "completed" {
				return nil, fmt.Errorf("handoff %d: %v %+v", i, err, res)
			}
		}
		return map[string]any{}, nil
	},
	"child": func(context.Context, *agent.Task) (map[string]any, error) { return map[string]any{}, nil },
}

// stats is the median and 99th percentile in microseconds.
func stats(d []time.Duration) map[string]any {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return map[string]any{"median_us": d[len(d)/2].Microseconds(), "p99_us": d[len(d)*99/100].Microseconds()}
}

// runOne runs a one-cue cuelist whose agent plays role, on a fresh database,
// and returns the cue's outputs and the database.
func runOne(b *testing.B, role string, n int, extraAgents string) (map[string]any, *store.DB, string) {
	b.Helper()
	dir := b.TempDir()
	self, _ := os.Executable()
	agentDoc := func(id, role, extra string) string {
		return fmt.Sprintf("agent: {id: %s, protocol: jsonl, command: [%q], env: {BENCH_AGENT: %s}%s}\n", id, self, role, extra)
	}
	agents := agentDoc("main", role, ", handoff_to: [child]") + "---\n" + agentDoc("child", "child", "") + extraAgents
	files := map[string]string{
		"cuelist.yaml": fmt.Sprintf("cuelist:\n  id: bench\n  include: [agents.yaml]\n  guardrails: {loop_warn: 1000000000, loop_block: 1000000000}\n  defaults: {timeout: 10m}\n  cues:\n    - {id: C, agents: [main], inputs: {n: %d}}\n", n),
		"agents.yaml":  agents,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	_, p, diags, err := planner.Compile(filepath.Join(dir, "cuelist.yaml"), "", spec.LoadOptions{})
	if err != nil || p == nil {
		b.Fatalf("compile: %v %v", err, diags)
	}
	db, err := store.Open(filepath.Join(dir, "orch.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	b.ResetTimer()
	res, err := runner.Run(context.Background(), runner.Options{Plan: p, Recorder: db, Inputs: p.Cuelist.Inputs, ProjectRoot: dir})
	b.StopTimer()
	if err != nil || res.State != record.RunCompleted {
		b.Fatalf("run: %v %+v", err, res)
	}
	detail, err := db.Run(context.Background(), res.RunID)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range detail.Cues {
		if c.ID == "C" {
			return c.Outputs, db, res.RunID
		}
	}
	b.Fatal("no cue C")
	return nil, nil, ""
}

// BenchmarkBlackboardVisible: a write, acknowledged (committed), then read
// back (what another agent's read would see).
func BenchmarkBlackboardVisible(b *testing.B) {
	out, _, _ := runOne(b, "pingpong", b.N, "")
	for _, k := range []string{"write", "read", "visible"} {
		m := out[k].(map[string]any)
		b.ReportMetric(m["median_us"].(float64), k+"-median-µs")
		b.ReportMetric(m["p99_us"].(float64), k+"-p99-µs")
	}
}

// BenchmarkBlackboardFlood: b.N writes pipelined by one agent; all must be
// stored.
func BenchmarkBlackboardFlood(b *testing.B) {
	out, db, run := runOne(b, "flood", b.N, "")
	board, err := db.Blackboard(context.Background(), run)
	if err != nil || len(board) != b.N {
		b.Fatalf("%d of %d writes stored (%v)", len(board), b.N, err)
	}
	b.ReportMetric(float64(b.N)/out["seconds"].(float64), "writes/s")
}

// BenchmarkHandoffStart: from the parent's task.handoff arriving to the
// child's coord.warning going out (checks, records, the child's attempt), with
// the child's process already running; one handoff after another.
func BenchmarkHandoffStart(b *testing.B) {
	_, db, run := runOne(b, "parent", b.N, "")
	events, err := db.Events(context.Background(), run, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	var in time.Time
	var starts []time.Duration
	for _, e := range events {
		if e.Type != record.EvMessage {
			continue
		}
		m := e.Data.(record.MessageData)
		switch {
		case e.Cue == "C" && m.Type == "task.handoff":
			in = e.At
		case e.Cue != "C" && m.Type == "coord.warning" && !in.IsZero():
			starts = append(starts, e.At.Sub(in))
			in = time.Time{}
		}
	}
	if len(starts) != b.N {
		b.Fatalf("%d handoff starts for %d handoffs", len(starts), b.N)
	}
	s := stats(starts)
	b.ReportMetric(float64(s["median_us"].(int64)), "start-median-µs")
	b.ReportMetric(float64(s["p99_us"].(int64)), "start-p99-µs")
}
