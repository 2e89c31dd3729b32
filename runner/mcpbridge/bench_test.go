package mcpbridge

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func callWrite(cs *mcp.ClientSession, key string, v int) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "blackboard_write", Arguments: map[string]any{"key": key, "value": v}})
}

// BenchmarkRoundTrip is a blackboard_write then a blackboard_read through
// HTTP with the SDK's client (the fake task costs next to nothing): it
// reports the median and the 99th percentile of the pair.
func BenchmarkRoundTrip(b *testing.B) {
	e := startEndpoint(b)
	token, _ := e.Register("build/1", newFakeTask("coder"))
	cs := connect(b, e, token, nil)
	read := &mcp.CallToolParams{Name: "blackboard_read", Arguments: map[string]any{"key": "k"}}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if res, err := callWrite(cs, "k", i); err != nil || res.IsError {
			b.Fatal(err, text(res))
		}
		if res, err := cs.CallTool(context.Background(), read); err != nil || res.IsError {
			b.Fatal(err, text(res))
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRegister is an attempt's cost: its server with every tool.
func BenchmarkRegister(b *testing.B) {
	e := startEndpoint(b)
	task := newFakeTask("coder")
	for i := 0; i < b.N; i++ {
		_, unregister := e.Register(fmt.Sprint(i), task)
		unregister()
	}
}

// BenchmarkEndpointMemory reports what an endpoint holds with 50 attempts,
// each with a session that made a call (the heap in use, after a GC,
// beyond what it was before the endpoint started).
func BenchmarkEndpointMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		before := heapInUse()
		e, err := Start(Options{})
		if err != nil {
			b.Fatal(err)
		}
		var sessions []*mcp.ClientSession
		for a := 0; a < 50; a++ {
			token, _ := e.Register(fmt.Sprint(a), newFakeTask("coder"))
			cs := connect(b, e, token, nil)
			if res, err := callWrite(cs, "k", a); err != nil || res.IsError {
				b.Fatal(err)
			}
			sessions = append(sessions, cs)
		}
		b.ReportMetric(float64(heapInUse()-before)/(1<<20), "MB")
		for _, cs := range sessions {
			_ = cs.Close()
		}
		_ = e.Close()
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkBareHTTPRoundTrip is the baseline of BenchmarkRoundTrip: two
// POSTs of a small JSON body to a handler that echoes it, on loopback with
// keep-alive: the floor of any call over HTTP on this machine.
func BenchmarkBareHTTPRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, r.Body)
	}))
	defer srv.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"blackboard_write","arguments":{"key":"k","value":1}}}`
	post := func() {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	times := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		post()
		post()
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
}
