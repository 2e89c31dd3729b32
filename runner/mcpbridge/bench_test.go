package mcpbridge

import (
	"context"
	"fmt"
	"slices"
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
