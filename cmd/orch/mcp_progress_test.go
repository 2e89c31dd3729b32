//go:build unix

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/mcpserver"
)

// TestMCPWaitProgress: a wait that asked for progress hears, while it
// waits, that the run is still running; then it returns why timeout.
func TestMCPWaitProgress(t *testing.T) {
	dir := writeFiles(t, mcpErrorSpecs)
	ctl := control.New(control.Config{DB: filepath.Join(dir, ".orch", "orch.db")})
	defer ctl.Close()
	exe, err := exec.LookPath("orch") // the test binary as orch (TestMain)
	if err != nil {
		t.Fatal(err)
	}
	ctl.Exe = exe
	s, err := mcpserver.New(mcpserver.Options{Control: ctl, Root: dir, Poll: 20 * time.Millisecond, Progress: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = s.Run(ctx, st) }()
	var heard atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params.ProgressToken == "w1" {
				heard.Add(1)
			}
		}})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var started struct {
		Run string `json:"run"`
	}
	okTool(t, cs, "run", map[string]any{"cuelist": "long.yaml"}, &started)
	defer ctl.Stop(context.Background(), control.StopRequest{Run: started.Run, Wait: 10 * time.Second})
	params := &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{"run": started.Run, "until": "question", "timeout_seconds": 1}}
	params.SetProgressToken("w1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("wait: %v %v", err, res)
	}
	if why := res.StructuredContent.(map[string]any)["why"]; why != "timeout" {
		t.Errorf("wait: why %v, want timeout", why)
	}
	if heard.Load() == 0 {
		t.Error("no progress notification while wait waited")
	}
}
