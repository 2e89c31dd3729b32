//go:build unix

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCP: issue 31's figures. toolslist: a client starts orch mcp
// (this test binary as orch), initializes and lists the tools, and closes:
// the whole round trip including start-up; version is the same process
// started for orch version, the baseline. status: the status tool on a run
// of 10,000 cues (buildServeDB's), through one orch mcp session.
// ORCH_BENCH_ORCH names another orch binary to start (bench/mcp.sh: the
// real one, built).
func BenchmarkMCP(b *testing.B) {
	ctx := context.Background()
	orch := cmp.Or(os.Getenv("ORCH_BENCH_ORCH"), "orch")
	connect := func(b *testing.B, args ...string) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cs, err := client.Connect(cctx, &mcp.CommandTransport{Command: exec.Command(orch, append([]string{"mcp"}, args...)...)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return cs
	}
	b.Run("version", func(b *testing.B) {
		for b.Loop() {
			if out, err := exec.Command(orch, "version").Output(); err != nil || !strings.HasPrefix(string(out), "orch ") {
				b.Fatalf("orch version: %s %v", out, err)
			}
		}
	})
	b.Run("toolslist", func(b *testing.B) {
		for b.Loop() {
			cs := connect(b)
			list, err := cs.ListTools(ctx, nil)
			if err != nil || len(list.Tools) != len(driveTools) {
				b.Fatalf("tools/list: %v %v", list, err)
			}
			_ = cs.Close()
		}
	})
	path := filepath.Join(b.TempDir(), "orch.db")
	buildServeDB(b, path)
	b.Run("status-10000-cues", func(b *testing.B) {
		cs := connect(b, "--db", path)
		defer cs.Close()
		size := 0
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "status", Arguments: map[string]any{"run": "big"}})
			if err != nil || res.IsError {
				b.Fatalf("status: %v %v", err, toolText(res))
			}
			text := toolText(res)
			if !strings.Contains(text, `"id":"B09999"`) {
				b.Fatalf("status: no cue B09999 in %.300s", text)
			}
			size = len(text)
		}
		b.ReportMetric(float64(size)/1e6, "MB-reply")
	})
	// The same call from a client that reads the reply's bytes and decodes
	// nothing: orch's side of the round trip (the SDK's Go client above
	// also decodes the reply into maps).
	b.Run("status-10000-cues-raw", func(b *testing.B) {
		cmd := exec.Command(orch, "mcp", "--db", path)
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = in.Close(); _ = cmd.Wait() }()
		r := bufio.NewReaderSize(out, 1<<20)
		roundTrip := func(msg string) []byte {
			if _, err := io.WriteString(in, msg+"\n"); err != nil {
				b.Fatal(err)
			}
			line, err := r.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			return line
		}
		roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
		if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
			b.Fatal(err)
		}
		for i := 1; b.Loop(); i++ {
			line := roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"status","arguments":{"run":"big"}}}`, i))
			if !bytes.Contains(line, []byte(`"id":"B09999"`)) {
				b.Fatalf("status: %.300s", line)
			}
		}
	})
}
