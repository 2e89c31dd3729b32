//go:build clis_e2e && linux

package clis

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orch-cli/orch/internal/mockmodel"
)

// TestClaudeOnTemporalWorker runs claude-code (on the mock model) on an
// orch worker of a Temporal dev server: the CLI gets orch's MCP server from
// the worker, its ask tool reaches the person through the run's workflow,
// orch answer answers it, and the answer comes back through the CLI's
// reply into the cue's outputs.
func TestClaudeOnTemporalWorker(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	w := newWorld(t, map[string]mockmodel.Script{"ask": askScript}, false)
	w.env = append(w.env, "TEMPORAL_ADDRESS="+temporalServer(t))
	w.write(map[string]string{"cuelist.yaml": `cuelist:
  id: asks-on-temporal
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m}
  cues:
    - {id: CHOOSE, agents: [chooser]}
    - {id: AFTER, agents: [after], dependencies: [CHOOSE]}
---
agent:
  id: after
  command: ["true"]
---
` + chooser}, false)
	worker := exec.Command(orchBin, "worker", "--root", w.dir)
	worker.Dir, worker.Env = w.dir, w.env
	worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var wlog strings.Builder
	worker.Stdout, worker.Stderr = &wlog, &wlog
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	stopWorker := func() {
		_ = syscall.Kill(-worker.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = worker.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(patience):
			_ = syscall.Kill(-worker.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	t.Cleanup(func() {
		if worker.ProcessState == nil {
			stopWorker()
		}
		if t.Failed() {
			t.Logf("orch worker:\n%s", wlog.String())
		}
	})

	run := w.start("run", "--engine", "temporal", "cuelist.yaml")
	q := run.question(t, w, "q1")
	contains(t, "q1", q, "Which database should slugs live in?")
	if r := w.orch("answer", "last", "q1", "postgres"); r.code != 0 {
		t.Fatalf("orch answer q1 postgres exited %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if code := run.wait(t); code != 0 {
		t.Fatalf("orch run --engine temporal exited %d\n%s\nlogs:\n%s\nthe model's requests:\n%s", code, run.out(), w.orch("logs", "last").stdout, describe(w.scripted("ask")))
	}
	if got := calls(w, "ask"); !slices.Equal(got, []string{"mcp__orch__ask"}) {
		t.Errorf("claude called %v, want mcp__orch__ask\n%s", got, describe(w.scripted("ask")))
	}
	out := w.cueOutputs()["CHOOSE"]
	if out["database"] != "postgres" {
		t.Errorf("CHOOSE's outputs: %v, want database postgres (the person's answer, through claude's reply)", out)
	}
	stopWorker()
	w.noneLeft()
}

// temporalServer starts a Temporal dev server (scripts/temporal-dev.sh,
// cached once built) for the test, with orch-temporal built next to orch,
// and returns its address.
func temporalServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", filepath.Dir(orchBin)+string(os.PathSeparator), "./cmd/orch-temporal")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/orch-temporal: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	script, _ := filepath.Abs("../../scripts/temporal-dev.sh")
	dir := t.TempDir()
	out, err := exec.Command(script, "start", "--port", port, "--dir", dir).Output()
	if err != nil {
		t.Fatalf("temporal-dev.sh start: %v", err)
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", "--dir", dir).Run() })
	return strings.TrimSpace(string(out))
}
