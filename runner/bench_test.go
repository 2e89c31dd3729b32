//go:build unix

package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/orch-cli/orch/internal/specgen"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

func compileGenerated(b testing.TB, o specgen.Options) *planner.Plan {
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
	if err != nil || res.State != record.RunCompleted {
		if res != nil {
			if d, _ := db.Run(context.Background(), res.RunID); d != nil {
				for _, c := range d.Cues {
					if c.State == record.CueFailed {
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

// BenchmarkRunChainParts splits the 200-cue chain's overhead in one process,
// the three in turn every iteration so the machine's drift moves them alike:
// the same 200 processes started bare, the runner with an in-memory
// recorder (its own cost), and the runner with the SQLite store. What the
// CLI adds on top (process start, compile, open and close of the database)
// is in bench/run.sh.
func BenchmarkRunChainParts(b *testing.B) {
	const cues = 200
	o := specgen.Options{Cues: cues, Agents: 1, Command: "/bin/true", Protocol: "none", Chain: true, MaxParallel: 1, NoProvides: true, Seed: 1}
	p := compileGenerated(b, o)
	db, err := store.Open(filepath.Join(b.TempDir(), "orch.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	// run runs the chain once and returns how long it took.
	run := func(opts runner.Options) time.Duration {
		opts.Plan = p
		start := time.Now()
		res, err := runner.Run(context.Background(), opts)
		if err != nil || res.State != record.RunCompleted {
			b.Fatalf("run: %v %+v", err, res)
		}
		return time.Since(start)
	}
	var bare, memory, sqlite []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		for range cues {
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
		bare = append(bare, time.Since(start))
		memory = append(memory, run(runner.Options{Recorder: runner.NewMemRecorder()}))
		sqlite = append(sqlite, run(runner.Options{Recorder: db, DBPath: db.Path()}))
	}
	us := func(ds []time.Duration) float64 { return float64(percentile(ds, 50).Microseconds()) }
	base := us(bare)
	b.ReportMetric(base/cues, "bare-µs/cue")
	b.ReportMetric((us(memory)-base)/cues, "runner-µs/cue")
	b.ReportMetric((us(sqlite)-us(memory))/cues, "store-µs/cue")
	b.ReportMetric(us(sqlite)/base, "x-bare")
}

// percentile sorts ds and returns its pc-th percentile.
func percentile(ds []time.Duration, pc int) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)*pc/100]
}

// BenchmarkProtocolRoundTrips runs 1,000 cues of a jsonl agent that answers
// at once, max_parallel 1 and 2, and reports per cue:
//   - protocol-ms: the three exchanges WARNING->ack, STANDBY->ack and
//     GO->complete added up, each from orch's decision to send (its commit
//     included) to the reply taken up by orch's loop;
//   - e2e-ms: from coord.warning to task.complete, which also holds the time
//     a cue warned early waits for a max_parallel slot.
func BenchmarkProtocolRoundTrips(b *testing.B) {
	// The collector as orch run sets it (cmd/orch/gc.go),
	// unless GOGC says otherwise: this measures what users get.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	for _, parallel := range []int{1, 2} {
		b.Run(fmt.Sprintf("max_parallel=%d", parallel), func(b *testing.B) { benchProtocol(b, parallel) })
	}
}

func benchProtocol(b *testing.B, parallel int) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var yaml bytes.Buffer
	fmt.Fprintf(&yaml, "agent: {id: fast, protocol: jsonl, command: [%q, ok], concurrency: 4, env: {ORCH_FAKE_AGENT: \"1\"}}\n---\n", self)
	fmt.Fprintf(&yaml, "cuelist:\n  id: protocol\n  max_parallel: %d\n  cues:\n", parallel)
	const n = 1000
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
	var e2e, protocol []time.Duration
	phases := map[string][]time.Duration{}
	b.ResetTimer()
	for range b.N {
		db, err := store.Open(filepath.Join(b.TempDir(), "orch.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := runner.Run(context.Background(), runner.Options{Plan: p, Recorder: db, DBPath: db.Path()})
		if err != nil || res.State != record.RunCompleted {
			b.Fatalf("run: %v %+v", err, res)
		}
		b.StopTimer()
		events, err := db.Events(context.Background(), res.RunID, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		sent := map[string]time.Time{}
		exchanges := map[string]time.Duration{}
		for _, e := range events {
			if e.Type != record.EvMessage {
				continue
			}
			m := e.Data.(record.MessageData)
			switch {
			case m.Direction == "out":
				sent[e.Cue+m.Type] = e.At
			case m.Direction == "in":
				req := map[string]string{"ack.warning": "coord.warning", "ack.standby": "coord.standby", "task.complete": "coord.go"}[m.Type]
				d := e.At.Sub(sent[e.Cue+req])
				phases[m.Type] = append(phases[m.Type], d)
				exchanges[e.Cue] += d
				if m.Type == "task.complete" {
					e2e = append(e2e, e.At.Sub(sent[e.Cue+"coord.warning"]))
					protocol = append(protocol, exchanges[e.Cue])
				}
			}
		}
		db.Close()
		b.StartTimer()
	}
	report := func(ds []time.Duration, unit string) {
		b.ReportMetric(float64(percentile(ds, 50).Microseconds())/1000, unit+"-median")
		b.ReportMetric(float64(percentile(ds, 99).Microseconds())/1000, unit+"-p99")
	}
	report(protocol, "protocol-ms")
	report(e2e, "e2e-ms")
	for typ, ds := range phases {
		b.Logf("%s: median %s p99 %s", typ, percentile(ds, 50), percentile(ds, 99))
	}
}
