//go:build otelcol_e2e && unix

package otelcol

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

	sink := &sink{}
	sinkSrv := httptest.NewServer(sink)
	defer sinkSrv.Close()
	grpcAddr, httpAddr := freeAddr(t), freeAddr(t)
	startCollector(t, collector, tmp, grpcAddr, httpAddr, sinkSrv.URL)

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
			spans := sink.waitForRun(t, runID, 5)
			checkTrace(t, spans, project)
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

// sink is the collector's OTLP/HTTP destination: it keeps the spans it is
// sent (as OTLP/JSON), with their resource's service.name.
type sink struct {
	mu    sync.Mutex
	spans []span
}

type span struct {
	TraceID, SpanID, ParentSpanID, Name, Service string
	Attrs                                        map[string]string
	StatusCode                                   int
}

type jsonAttr struct {
	Key   string         `json:"key"`
	Value map[string]any `json:"value"`
}

func attrMap(attrs []jsonAttr) map[string]string {
	m := map[string]string{}
	for _, a := range attrs {
		for _, v := range a.Value {
			m[a.Key] = fmt.Sprint(v)
		}
	}
	return m
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []jsonAttr `json:"attributes"`
			} `json:"resource"`
			ScopeSpans []struct {
				Spans []struct {
					TraceID      string     `json:"traceId"`
					SpanID       string     `json:"spanId"`
					ParentSpanID string     `json:"parentSpanId"`
					Name         string     `json:"name"`
					Attributes   []jsonAttr `json:"attributes"`
					Status       struct {
						Code int `json:"code"`
					} `json:"status"`
				} `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if r.URL.Path != "/v1/traces" || json.Unmarshal(body, &req) != nil {
		http.Error(w, "not OTLP/JSON traces", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := attrMap(rs.Resource.Attributes)["service.name"]
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				s.spans = append(s.spans, span{TraceID: strings.ToLower(sp.TraceID), SpanID: strings.ToLower(sp.SpanID),
					ParentSpanID: strings.ToLower(sp.ParentSpanID), Name: sp.Name, Service: service,
					Attrs: attrMap(sp.Attributes), StatusCode: sp.Status.Code})
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, "{}")
}

// waitForRun returns the run's spans once n of them arrived (30 s at most).
func (s *sink) waitForRun(t *testing.T, runID string, n int) []span {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got []span
		s.mu.Lock()
		for _, sp := range s.spans {
			if sp.Attrs["orch.run.id"] == runID {
				got = append(got, sp)
			}
		}
		s.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func checkTrace(t *testing.T, spans []span, project string) {
	t.Helper()
	var run span
	cues := map[string]span{}
	var attempts []span
	traces := map[string]bool{}
	for _, s := range spans {
		traces[s.TraceID] = true
		if s.Service != "orch-e2e" {
			t.Errorf("span %s: service.name %q, want OTEL_SERVICE_NAME's", s.Name, s.Service)
		}
		switch {
		case strings.HasPrefix(s.Name, "run "):
			run = s
		case strings.HasPrefix(s.Name, "cue "):
			cues[s.Attrs["orch.cue.id"]] = s
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
		cue := a.Attrs["orch.cue.id"]
		if a.ParentSpanID != cues[cue].SpanID {
			t.Errorf("attempt of %s: parent %s, not its cue's span %s", cue, a.ParentSpanID, cues[cue].SpanID)
		}
		seen, err := os.ReadFile(filepath.Join(project, "tp-"+a.Attrs["orch.run.id"]+"-"+cue))
		if err != nil {
			t.Fatal(err)
		}
		if want := "00-" + a.TraceID + "-" + a.SpanID + "-01"; strings.TrimSpace(string(seen)) != want {
			t.Errorf("%s's agent saw TRACEPARENT %q, want %q", cue, seen, want)
		}
	}
}
