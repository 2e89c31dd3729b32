//go:build otelcol_e2e && unix

package otelcol

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/internal/otlptest"
)

// TestCollectorReceivesTheRun: over each OTLP protocol, a real collector
// accepts orch's spans and hands on the run's trace: the run's span the
// root, each cue's span its child, each attempt's its cue's, the resource's
// service.name OTEL_SERVICE_NAME's, and each agent's TRACEPARENT naming its
// attempt's span.
func TestCollectorReceivesTheRun(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	orch := goBuild(t, root, filepath.Join(tmp, "orch"), "./cmd/orch")
	collector := goBuild(t, filepath.Join(root, "tools", "otelcol"), filepath.Join(tmp, "otelcol-orch"), ".")

	sink := &otlptest.Receiver{}
	grpcAddr, httpAddr := freeAddr(t), freeAddr(t)
	startCollector(t, collector, tmp, grpcAddr, httpAddr, sink.ServeHTTPURL(t))

	project := filepath.Join(tmp, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "cuelist.yaml"), []byte(cuelist), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ protocol, endpoint string }{
		{"grpc", "http://" + grpcAddr},
		{"http/protobuf", "http://" + httpAddr},
		{"http/json", "http://" + httpAddr},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			cmd := exec.Command(orch, "run", "--db", filepath.Join(tmp, "orch.db"), "--output", "json", "cuelist.yaml")
			cmd.Dir = project
			cmd.Env = append(cleanEnv(), "OTEL_EXPORTER_OTLP_ENDPOINT="+tc.endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL="+tc.protocol,
				"OTEL_EXPORTER_OTLP_COMPRESSION=gzip", "OTEL_SERVICE_NAME=orch-e2e")
			out, err := cmd.CombinedOutput()
			if err != nil || strings.Contains(string(out), "orch: warning") {
				t.Fatalf("orch run: %v\n%s", err, out)
			}
			runID := lastRunID(t, out)
			spans := waitForRun(t, sink, runID, 5)
			checkTrace(t, spans, project)
			sink.Mu.Lock()
			service := sink.Resource["service.name"]
			sink.Mu.Unlock()
			if service != "orch-e2e" {
				t.Errorf("the resource's service.name %q, want OTEL_SERVICE_NAME's", service)
			}
		})
	}
}

const cuelist = `cuelist:
  id: traced
  cues:
    - {id: BUILD, agents: [builder]}
    - {id: TEST, agents: [tester], dependencies: [BUILD]}
---
agent: {id: builder, run: 'echo "$TRACEPARENT" > "$ORCH_ROOT/tp-$ORCH_RUN_ID-$ORCH_CUE_ID"'}
---
agent: {id: tester, run: 'echo "$TRACEPARENT" > "$ORCH_ROOT/tp-$ORCH_RUN_ID-$ORCH_CUE_ID"'}
`

func goBuild(t *testing.T, dir, out, pkg string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s in %s: %v\n%s", pkg, dir, err, b)
	}
	return out
}

// cleanEnv is the test's environment without OTEL_* variables and
// TRACEPARENT, which each run sets itself.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "TRACE") && !strings.HasPrefix(kv, "ORCH_") {
			env = append(env, kv)
		}
	}
	return env
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startCollector runs the collector until the test ends: OTLP in on
// grpcAddr and httpAddr, OTLP/JSON out to sinkURL.
func startCollector(t *testing.T, bin, dir, grpcAddr, httpAddr, sinkURL string) {
	t.Helper()
	config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc: {endpoint: %q}
      http: {endpoint: %q}
exporters:
  otlp_http:
    endpoint: %q
    encoding: json
    compression: none
service:
  telemetry:
    metrics: {level: none}
  pipelines:
    traces: {receivers: [otlp], exporters: [otlp_http]}
`, grpcAddr, httpAddr, sinkURL)
	path := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "collector.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("collector log:\n%s", b)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for _, addr := range []string{grpcAddr, httpAddr} {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(log.Name())
				t.Fatalf("the collector does not listen on %s after 30 s:\n%s", addr, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func lastRunID(t *testing.T, out []byte) string {
	t.Helper()
	for _, line := range strings.Split(string(out), "\n") {
		var ev struct {
			RunID string `json:"run_id"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.RunID != "" {
			return ev.RunID
		}
	}
	t.Fatalf("no run id in orch's output:\n%s", out)
	return ""
}

// waitForRun returns the run's spans once n of them reached rcv (30 s at
// most).
func waitForRun(t *testing.T, rcv *otlptest.Receiver, runID string, n int) []otlptest.Span {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got []otlptest.Span
		rcv.Mu.Lock()
		for _, sp := range rcv.Spans {
			if sp.Attr("orch.run.id") == runID {
				got = append(got, sp)
			}
		}
		bad := rcv.Bad
		rcv.Mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("the collector sent what the test could not read: %v", bad)
		}
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func checkTrace(t *testing.T, spans []otlptest.Span, project string) {
	t.Helper()
	var run otlptest.Span
	cues := map[string]otlptest.Span{}
	var attempts []otlptest.Span
	traces := map[string]bool{}
	for _, s := range spans {
		traces[s.TraceID] = true
		switch {
		case strings.HasPrefix(s.Name, "run "):
			run = s
		case strings.HasPrefix(s.Name, "cue "):
			cues[s.Attr("orch.cue.id")] = s
		case strings.HasPrefix(s.Name, "invoke_agent "):
			attempts = append(attempts, s)
		}
	}
	if len(traces) != 1 || run.SpanID == "" || run.ParentSpanID != "" || run.StatusCode != 1 {
		t.Fatalf("%d traces, run span %+v: want one trace under a completed root", len(traces), run)
	}
	if len(cues) != 2 || len(attempts) != 2 {
		t.Fatalf("%d cue spans and %d attempt spans, want 2 and 2: %+v", len(cues), len(attempts), spans)
	}
	for id, c := range cues {
		if c.ParentSpanID != run.SpanID {
			t.Errorf("cue %s: parent %s, not the run's span %s", id, c.ParentSpanID, run.SpanID)
		}
	}
	for _, a := range attempts {
		cue := a.Attr("orch.cue.id")
		if a.ParentSpanID != cues[cue].SpanID {
			t.Errorf("attempt of %s: parent %s, not its cue's span %s", cue, a.ParentSpanID, cues[cue].SpanID)
		}
		seen, err := os.ReadFile(filepath.Join(project, "tp-"+a.Attr("orch.run.id")+"-"+cue))
		if err != nil {
			t.Fatal(err)
		}
		if want := "00-" + a.TraceID + "-" + a.SpanID + "-01"; strings.TrimSpace(string(seen)) != want {
			t.Errorf("%s's agent saw TRACEPARENT %q, want %q", cue, seen, want)
		}
	}
}
