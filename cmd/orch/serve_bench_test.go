//go:build unix

package main

// The figures of orch serve (bench/serve.sh runs these): the API's latency
// on a database of 1,000 runs and one run of 10,000 cues, the server's
// memory, and how an event stream keeps up with another process writing.
// The server is a real orch serve process; the database is built through
// the store directly, without agents.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

const (
	benchRuns    = 1000  // runs of a few cues each
	benchBigCues = 10000 // cues of the one big run
)

// buildServeDB writes benchRuns small runs (a few paused at a manual cue,
// a few asking the person a question) and one run, "big", of benchBigCues
// cues in a DAG, every cue through WARNING, STANDBY, GO and an attempt.
func buildServeDB(tb testing.TB, path string) {
	tb.Helper()
	w, err := store.Open(path, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	exit0, exit1 := 0, 1
	cueEvents := func(run, cue string, failFirst bool) []record.Event {
		ev := func(typ, state string, attempt int, data record.EventData) record.Event {
			at = at.Add(time.Microsecond)
			return record.Event{RunID: run, At: at, Type: typ, Cue: cue, Agent: "a", Attempt: attempt, State: state, Data: data}
		}
		out := []record.Event{
			ev(record.EvCueState, "warning", 0, nil), ev(record.EvAttemptStarted, "", 1, record.AttemptStartedData{}),
			ev(record.EvCueState, "standby", 0, nil), ev(record.EvCueState, "go", 0, nil),
		}
		n := 1
		if failFirst {
			out = append(out, ev(record.EvAttemptEnded, "failed", 1, record.AttemptEndedData{Class: "exit:1", ExitCode: &exit1}),
				ev(record.EvAttemptStarted, "", 2, record.AttemptStartedData{}))
			n = 2
		}
		return append(out, ev(record.EvAttemptEnded, "completed", n, record.AttemptEndedData{ExitCode: &exit0}),
			ev(record.EvCueState, "completed", 0, record.CueStateData{Outputs: map[string]any{"ok": true}}))
	}
	host, _ := os.Hostname()
	for i := range benchRuns {
		id := fmt.Sprintf("run%04d", i)
		started := record.RunStartedData{Cuelist: "small"}
		for c := range 5 {
			info := record.CueInfo{ID: fmt.Sprintf("C%d", c), Agents: []string{"a"}, Manual: c == 4}
			if c > 0 {
				info.After = []string{fmt.Sprintf("C%d", c-1)}
			}
			started.Cues = append(started.Cues, info)
		}
		if i%100 == 1 { // running, its owner alive (this process, until the server reads it: the lease is fresh)
			started.OwnerPID, started.OwnerHost, started.OwnerToken = os.Getpid(), host, "t"
		}
		at = at.Add(time.Millisecond)
		events := []record.Event{{RunID: id, At: at, Type: record.EvRunStarted, Data: started}}
		for c := range 4 {
			events = append(events, cueEvents(id, fmt.Sprintf("C%d", c), false)...)
		}
		switch i % 100 {
		case 0:
			events = append(events, record.Event{RunID: id, At: at, Type: record.EvRunState, State: "paused", Reason: "waiting for GO: C4"})
		case 1:
			events = append(events, record.Event{RunID: id, At: at, Type: record.EvQuestion, Cue: "C3", Agent: "a", Attempt: 1,
				Data: record.QuestionData{ID: "q1", Question: "which one?", Complexity: "quick", To: "person"}})
		default:
			events = append(events, cueEvents(id, "C4", false)...)
			events = append(events, record.Event{RunID: id, At: at, Type: record.EvRunState, State: "completed"})
		}
		if err := w.Append(ctx, events...); err != nil {
			tb.Fatal(err)
		}
	}
	started := record.RunStartedData{Cuelist: "big"}
	for c := range benchBigCues {
		info := record.CueInfo{ID: fmt.Sprintf("B%05d", c), Agents: []string{"a"}}
		if c > 0 {
			info.After = []string{fmt.Sprintf("B%05d", c-1)}
		}
		if c > 1 {
			info.After = append(info.After, fmt.Sprintf("B%05d", c/2))
		}
		started.Cues = append(started.Cues, info)
	}
	at = at.Add(time.Millisecond)
	if err := w.Append(ctx, record.Event{RunID: "big", At: at, Type: record.EvRunStarted, Data: started}); err != nil {
		tb.Fatal(err)
	}
	var batch []record.Event
	for c := range benchBigCues {
		batch = append(batch, cueEvents("big", fmt.Sprintf("B%05d", c), c%100 == 0)...)
		if len(batch) >= 5000 || c == benchBigCues-1 {
			if err := w.Append(ctx, batch...); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := w.Append(ctx, record.Event{RunID: "big", At: at, Type: record.EvRunState, State: "completed"}); err != nil {
		tb.Fatal(err)
	}
}

// startServe starts orch serve (this test binary as orch) on path and
// returns its URL (reads need no token on loopback) and pid.
func startServe(tb testing.TB, path string) (string, int) {
	tb.Helper()
	p := startServeProc(tb, path)
	return p.base, p.cmd.Process.Pid
}

// getBody GETs url and fails on anything but 200.
func getBody(tb testing.TB, url string) []byte {
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		tb.Fatalf("GET %s: %d %v %.200s", url, resp.StatusCode, err, b)
	}
	return b
}

// procStatus reads a line (VmRSS, VmHWM) of /proc/PID/status, in MB (0
// without /proc).
func procStatus(tb testing.TB, pid int, key string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkServe: GET /api/runs, /api/runs/big and /api/inbox against an
// orch serve process, then that process's memory (RSS and its peak).
func BenchmarkServe(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "orch.db")
	began := time.Now()
	buildServeDB(b, path)
	b.Logf("built %d runs and a run of %d cues in %v", benchRuns+1, benchBigCues, time.Since(began).Round(time.Millisecond))
	url, pid := startServe(b, path)
	for _, c := range []struct{ name, path, has string }{
		{"runs", "/api/runs", `"id": "run0999"`},
		{"bigrun", "/api/runs/big", `"id": "B09999"`},
		{"inbox", "/api/inbox", `"kind":"go"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			size := 0
			for b.Loop() {
				body := getBody(b, url+c.path)
				size = len(body)
				if !strings.Contains(string(body), c.has) {
					b.Fatalf("GET %s: no %s in %.300s", c.path, c.has, body)
				}
			}
			b.ReportMetric(float64(size)/1e6, "MB-body")
		})
	}
	b.Run("memory", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(procStatus(b, pid, "VmRSS"), "MB-rss")
		b.ReportMetric(procStatus(b, pid, "VmHWM"), "MB-peak-rss")
	})
}

// BenchmarkServeStream: another process appends events to a run through
// the store at a target rate (ORCH_BENCH_RATE, events/s; 0: as fast as it
// can) while a client follows GET /api/runs/ID/stream of an orch serve
// process; reports the rates written and delivered, and fails if an event
// is missing or out of order.
func BenchmarkServeStream(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("ORCH_BENCH_EVENTS"))
	if n <= 0 {
		n = 100000
	}
	rate := 20000
	if v, err := strconv.Atoi(os.Getenv("ORCH_BENCH_RATE")); err == nil {
		rate = v
	}
	path := filepath.Join(b.TempDir(), "orch.db")
	w, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	err = w.Append(context.Background(), record.Event{RunID: "s", Type: record.EvRunStarted, Data: record.RunStartedData{Cuelist: "stream"}})
	w.Close()
	if err != nil {
		b.Fatal(err)
	}
	url, pid := startServe(b, path)
	for b.Loop() {
		// (one round: the figures are of the whole)
		resp, err := http.Get(url + "/api/runs/s/stream")
		if err != nil {
			b.Fatal(err)
		}
		exe, _ := os.Executable()
		writer := exec.Command(exe, path, "s", strconv.Itoa(n), strconv.Itoa(rate))
		writer.Args[0] = "orch-bench-writer"
		writer.Stderr = os.Stderr
		wout, _ := writer.StdoutPipe()
		if err := writer.Start(); err != nil {
			b.Fatal(err)
		}
		wsc := bufio.NewScanner(wout)
		wsc.Scan() // "writing": it has opened the database
		start := time.Now()
		reported := make(chan string, 1)
		go func() {
			wsc.Scan()
			reported <- wsc.Text()
			_ = writer.Wait()
		}()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		next, got := int64(1), 0
		for got < n+1 && sc.Scan() {
			id, ok := strings.CutPrefix(sc.Text(), "id: ")
			if !ok {
				continue
			}
			seq, _ := strconv.ParseInt(id, 10, 64)
			if seq != next {
				b.Fatalf("event %d came after %d: lost or out of order", seq, next-1)
			}
			next++
			got++
		}
		took := time.Since(start)
		resp.Body.Close()
		line := <-reported
		if got < n+1 {
			b.Fatalf("the stream ended after %d of %d events (%v); the writer said %s", got, n+1, sc.Err(), line)
		}
		var written, wrote float64
		fmt.Sscanf(line, "wrote %g events in %gs", &written, &wrote)
		b.ReportMetric(written/wrote, "written/s")
		b.ReportMetric(float64(n)/took.Seconds(), "delivered/s")
		b.ReportMetric(took.Seconds()-wrote, "s-behind-at-end")
		b.ReportMetric(procStatus(b, pid, "VmHWM"), "MB-peak-rss")
	}
}

// benchWriterMain is orch-bench-writer DB RUN N RATE: it appends N note
// events to RUN, in batches every 10 ms to keep RATE events/s (0: batches
// of 500 as fast as it can), and says how long that took.
func benchWriterMain(args []string) int {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: orch-bench-writer DB RUN N RATE")
		return 2
	}
	n, _ := strconv.Atoi(args[2])
	rate, _ := strconv.Atoi(args[3])
	w, err := store.Open(args[0], store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer w.Close()
	batch := 500
	if rate > 0 {
		batch = max(1, rate/100)
	}
	fmt.Println("writing")
	ctx := context.Background()
	start := time.Now()
	events := make([]record.Event, 0, batch)
	for i := 0; i < n; {
		events = events[:0]
		for ; len(events) < batch && i < n; i++ {
			events = append(events, record.Event{RunID: args[1], Type: record.EvNote, Reason: "note " + strconv.Itoa(i)})
		}
		if err := w.Append(ctx, events...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if rate > 0 { // keep to the rate: sleep until this many events are due
			if due := start.Add(time.Duration(float64(i) / float64(rate) * float64(time.Second))); time.Until(due) > 0 {
				time.Sleep(time.Until(due))
			}
		}
	}
	fmt.Printf("wrote %d events in %.3fs\n", n, time.Since(start).Seconds())
	return 0
}
