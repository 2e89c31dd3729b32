package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// Targets (docs/design.md#the-store, the brief of this package): ≥ 20,000 events/s with
// concurrent appenders; Run on a run of 100,000 events and 1,000 cues, and
// Runs(20) or ResolveRun("last") among 10,000 runs, in well under 100 ms.
// Compare figures within one run of the benchmarks: machines here are shared.

// BenchmarkAppendConcurrent is sustained throughput: many goroutines append
// one event each, as the attempts of a wide wave do; handles=2 is two orch
// processes writing one database.
func BenchmarkAppendConcurrent(b *testing.B) {
	for _, handles := range []int{1, 2} {
		b.Run("handles="+strconv.Itoa(handles), func(b *testing.B) {
			d, path := openTest(b)
			startRun(b, d, "r1", "a")
			dbs := []*DB{d}
			for range handles - 1 {
				d2, err := Open(path, Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { d2.Close() })
				dbs = append(dbs, d2)
			}
			data := record.MessageData{Direction: "in", Type: "status.progress", ID: "m1", Body: json.RawMessage(`{"pct":50}`)}
			txBefore := d.stats.transactions.Load()
			var next atomic.Int64
			b.SetParallelism(8) // 8 goroutines per core
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				mine := dbs[int(next.Add(1))%len(dbs)]
				for pb.Next() {
					err := mine.Append(context.Background(), record.Event{RunID: "r1", Type: record.EvMessage,
						Cue: "a", Agent: "x", Attempt: 1, Data: data})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if handles == 1 {
				b.ReportMetric(float64(b.N)/float64(max(1, d.stats.transactions.Load()-txBefore)), "events/tx")
			}
		})
	}
}

// BenchmarkLog is agent output: lines queued without waiting, then flushed.
func BenchmarkLog(b *testing.B) {
	d, _ := openTest(b)
	startRun(b, d, "r1", "a")
	line := record.LogLine{RunID: "r1", Cue: "a", Agent: "x", Attempt: 1, Stream: "stderr",
		Text: "compiling package github.com/orch-cli/orch/runner/store"}
	for b.Loop() {
		d.Log(line)
	}
	if err := d.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkRunDetail is orch status RUN on a long run: 1,000 cues, 100,000
// events. Run reads the state tables only, so the events cost nothing.
func BenchmarkRunDetail(b *testing.B) {
	const cues, events = 1000, 100_000
	d, _ := openTest(b)
	ctx := context.Background()
	ids := make([]string, cues)
	for i := range ids {
		ids[i] = fmt.Sprintf("cue-%04d", i)
	}
	appendOK(b, d, startedEvent(b, "big", t0, ids...))
	var batch []record.Event
	add := func(ev record.Event) {
		ev.RunID = "big"
		batch = append(batch, ev)
		if len(batch) == maxBatch {
			appendOK(b, d, batch...)
			batch = batch[:0]
		}
	}
	body := record.MessageData{Direction: "in", Type: "status.progress", ID: "m", Body: json.RawMessage(`{"message_type":"status.progress","pct":50}`)}
	perCue := events / cues // and run/started
	for _, id := range ids {
		exit := 0
		add(record.Event{Type: record.EvCueState, Cue: id, State: "warning"})
		add(record.Event{Type: record.EvAttemptStarted, Cue: id, Agent: id + "-agent", Attempt: 1})
		add(record.Event{Type: record.EvCueState, Cue: id, State: "standby"})
		add(record.Event{Type: record.EvCueState, Cue: id, State: "go"})
		for range perCue - 6 {
			add(record.Event{Type: record.EvMessage, Cue: id, Agent: id + "-agent", Attempt: 1, Data: body})
		}
		add(record.Event{Type: record.EvAttemptEnded, Cue: id, Agent: id + "-agent", Attempt: 1, State: "completed",
			Data: record.AttemptEndedData{ExitCode: &exit, PID: 1234}})
		add(record.Event{Type: record.EvCueState, Cue: id, State: "completed",
			Data: record.CueStateData{Outputs: map[string]any{"artifact": "out/" + id}}})
	}
	if len(batch) > 0 {
		appendOK(b, d, batch...)
	}
	if evs, _ := d.Events(ctx, "big", events, 0); len(evs) != 1 {
		b.Fatalf("setup: the run does not have %d events", events+1)
	}
	for b.Loop() {
		r, err := d.Run(ctx, "big")
		if err != nil || len(r.Cues) != cues || r.Completed != cues {
			b.Fatalf("Run: %v", err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

// BenchmarkRunsList is orch status and orch status last among 10,000 runs.
func BenchmarkRunsList(b *testing.B) {
	const runs = 10_000
	d, _ := openTest(b)
	ctx := context.Background()
	var batch []record.Event
	for i := range runs {
		id := benchRunID(i)
		batch = append(batch, startedEvent(b, id, t0.Add(time.Duration(i)*time.Minute), "build", "test", "ship", "notify", "clean"))
		if len(batch) == 200 {
			appendOK(b, d, batch...)
			batch = batch[:0]
		}
	}
	appendOK(b, d, batch...)
	b.Run("Runs20", func(b *testing.B) {
		for b.Loop() {
			list, total, err := d.Runs(ctx, 20)
			if err != nil || len(list) != 20 || total != runs || list[0].Cues != 5 {
				b.Fatalf("Runs: %d of %d, %v", len(list), total, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
	b.Run("ResolveLast", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.ResolveRun(ctx, "last"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
	b.Run("ResolvePrefix", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.ResolveRun(ctx, benchRunID(4321)[:8]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	})
}

// BenchmarkCommitLatency is one caller appending one event at a time: the
// cost of a commit with synchronous=NORMAL and with FULL (an fsync each).
func BenchmarkCommitLatency(b *testing.B) {
	for _, sync := range []string{"normal", "full"} {
		b.Run("sync="+sync, func(b *testing.B) {
			d, err := Open(filepath.Join(b.TempDir(), "orch.db"), Options{Sync: sync})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			startRun(b, d, "r1", "a")
			for b.Loop() {
				appendOK(b, d, record.Event{RunID: "r1", Type: record.EvNote, Reason: "retry scheduled"})
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/commit")
		})
	}
}

// benchRunID spreads ids over the key space as random ids would be.
func benchRunID(i int) string {
	return fmt.Sprintf("%08x-%04d", uint32(i)*2654435761, i)
}
