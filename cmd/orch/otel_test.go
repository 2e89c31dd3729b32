//go:build unix

package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/otlptest"
)

// clearOtelEnv unsets the OTEL_* variables and TRACEPARENT the test's own
// environment may have, so that each test says what is set.
func clearOtelEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OTEL_") || k == "TRACEPARENT" || k == "TRACESTATE" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

const tracedCuelist = `cuelist:
  id: traced
  cues:
    - {id: BUILD, agents: [builder]}
    - {id: TEST, agents: [flaky], dependencies: [BUILD]}
---
agent: {id: builder, run: 'echo "$TRACEPARENT" > "$ORCH_ROOT/tp-$ORCH_CUE_ID-$ORCH_ATTEMPT"'}
---
agent:
  id: flaky
  run: 'echo "$TRACEPARENT" > "$ORCH_ROOT/tp-$ORCH_CUE_ID-$ORCH_ATTEMPT"; [ -e "$ORCH_ROOT/once" ] && exit 0; touch "$ORCH_ROOT/once"; exit 7'
  retry: {max_attempts: 2, backoff: 10ms}
`

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a run is one trace, over each
// protocol OTEL_EXPORTER_OTLP_PROTOCOL names (http/protobuf when unset):
// the run's span is the root, each cue's span its child, each attempt's
// span its cue's; the attempt that failed is an error with its reason; the
// cue phases are events; each agent saw a TRACEPARENT naming its attempt's
// span; OTEL_EXPORTER_OTLP_HEADERS and OTEL_SERVICE_NAME reached the
// collector.
func TestOtelExportsTheRunAsOneTrace(t *testing.T) {
	for _, protocol := range []string{"", "grpc", "http/json", "https"} {
		name := protocol
		if name == "" {
			name = "unset"
		}
		t.Run(name, func(t *testing.T) {
			clearOtelEnv(t)
			rcv := &otlptest.Receiver{}
			switch protocol {
			case "grpc":
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.ServeGRPC(t))
				t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			case "https":
				// A collector behind TLS, trusted through OTEL_EXPORTER_OTLP_CERTIFICATE.
				url, cert := rcv.ServeTLS(t)
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
				t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", cert)
			case "http/json":
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.ServeHTTPURL(t))
				t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			default:
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.ServeHTTPURL(t))
			}
			compress := protocol == "" || protocol == "grpc"
			if compress {
				t.Setenv("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip")
			}
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20tok")
			t.Setenv("OTEL_SERVICE_NAME", "ci-orch")
			dir := notifyDir(t, map[string]string{"cuelist.yaml": tracedCuelist})
			if code, out, errs := runOrch(t, dir, "run", "cuelist.yaml"); code != 0 || strings.Contains(errs, "warning") {
				t.Fatalf("orch run: exit %d\n%s%s", code, out, errs)
			}
			checkRunTrace(t, rcv, dir)
			if rcv.Gzipped == 0 && compress {
				t.Errorf("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=gzip: %d requests, none compressed", rcv.Requests)
			}
		})
	}
}

func checkRunTrace(t *testing.T, rcv *otlptest.Receiver, dir string) {
	t.Helper()
	rcv.Mu.Lock()
	defer rcv.Mu.Unlock()
	if len(rcv.Bad) > 0 {
		t.Fatalf("bad requests: %v", rcv.Bad)
	}
	if rcv.Auth != "Bearer tok" {
		t.Errorf("Authorization header %q, want OTEL_EXPORTER_OTLP_HEADERS's", rcv.Auth)
	}
	if rcv.Resource["service.name"] != "ci-orch" {
		t.Errorf("resource %v: service.name is not OTEL_SERVICE_NAME's", rcv.Resource)
	}
	var run otlptest.Span
	cues := map[string]otlptest.Span{}
	var attempts []otlptest.Span
	traces := map[string]bool{}
	for _, s := range rcv.Spans {
		traces[s.TraceID] = true
		switch {
		case strings.HasPrefix(s.Name, "run "):
			run = s
		case strings.HasPrefix(s.Name, "cue "):
			cues[s.Attr("orch.cue.id")] = s
		case strings.HasPrefix(s.Name, "invoke_agent "):
			attempts = append(attempts, s)
		default:
			t.Errorf("unexpected span %q", s.Name)
		}
	}
	if len(traces) != 1 {
		t.Errorf("%d traces, want one", len(traces))
	}
	if run.SpanID == "" || run.ParentSpanID != "" || run.StatusCode != 1 || run.Attr("orch.state") != "completed" {
		t.Fatalf("the run's span is not a completed root: %+v", run)
	}
	if len(cues) != 2 || len(attempts) != 3 {
		t.Fatalf("%d cue spans and %d attempt spans, want 2 and 3: %+v", len(cues), len(attempts), rcv.Spans)
	}
	for id, c := range cues {
		if c.ParentSpanID != run.SpanID {
			t.Errorf("cue %s's span's parent is %s, not the run's span %s", id, c.ParentSpanID, run.SpanID)
		}
		for _, phase := range []string{"warning", "standby", "go", "completed"} {
			if !c.HasEvent(phase) {
				t.Errorf("cue %s's span has no %s event: %+v", id, phase, c.Events)
			}
		}
	}
	failed := 0
	for _, a := range attempts {
		cue := a.Attr("orch.cue.id")
		if a.ParentSpanID != cues[cue].SpanID {
			t.Errorf("attempt %s of %s: parent %s, not its cue's span %s", a.Attr("orch.attempt"), cue, a.ParentSpanID, cues[cue].SpanID)
		}
		if a.Attr("gen_ai.operation.name") != "invoke_agent" || a.Attr("gen_ai.agent.name") != a.Attr("orch.agent.id") || a.Attr("orch.run.id") != run.Attr("orch.run.id") {
			t.Errorf("attempt span attributes: %+v", a.Attributes)
		}
		if a.StatusCode == 2 {
			failed++
			if cue != "TEST" || !strings.Contains(a.StatusMessage, "7") || a.Attr("orch.failure_class") != "exit:7" {
				t.Errorf("failed attempt: %s, status %q, class %v", cue, a.StatusMessage, a.Attr("orch.failure_class"))
			}
		}
		// The agent saw TRACEPARENT 00-<trace id>-<its attempt span's id>-01.
		seen, err := os.ReadFile(filepath.Join(dir, "tp-"+cue+"-"+a.Attr("orch.attempt")))
		if err != nil {
			t.Fatal(err)
		}
		if want := "00-" + a.TraceID + "-" + a.SpanID + "-01"; strings.TrimSpace(string(seen)) != want {
			t.Errorf("%s attempt %s saw TRACEPARENT %q, want %q", cue, a.Attr("orch.attempt"), seen, want)
		}
	}
	if failed != 1 {
		t.Errorf("%d failed attempt spans, want 1", failed)
	}
}

// With no OTEL_* variable and no --otel, agents get no TRACEPARENT; with
// an endpoint but OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none,
// nothing reaches it either.
func TestOtelOffByDefault(t *testing.T) {
	for _, env := range [][]string{nil, {"OTEL_SDK_DISABLED", "true"}, {"OTEL_TRACES_EXPORTER", "none"}} {
		t.Run(strings.Join(env, "="), func(t *testing.T) {
			clearOtelEnv(t)
			rcv := &otlptest.Receiver{}
			url := rcv.ServeHTTPURL(t)
			if env != nil {
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
				t.Setenv(env[0], env[1])
			}
			dir := notifyDir(t, map[string]string{"cuelist.yaml": tracedCuelist})
			if code, out, errs := runOrch(t, dir, "run", "cuelist.yaml"); code != 0 {
				t.Fatalf("orch run: exit %d\n%s%s", code, out, errs)
			}
			rcv.Mu.Lock()
			defer rcv.Mu.Unlock()
			if rcv.Requests != 0 {
				t.Errorf("%d requests reached the receiver with OpenTelemetry off", rcv.Requests)
			}
			seen, err := os.ReadFile(filepath.Join(dir, "tp-BUILD-1"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(seen)) != "" {
				t.Errorf("an agent saw TRACEPARENT %q with OpenTelemetry off", seen)
			}
		})
	}
}

// --otel on orch go (as on run, resume and retry) exports the part of the
// run it carries out, even where OTEL_TRACES_EXPORTER=none would not.
func TestOtelFlagOnGo(t *testing.T) {
	clearOtelEnv(t)
	rcv := &otlptest.Receiver{}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.ServeHTTPURL(t)+"/v1/traces")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	dir := notifyDir(t, map[string]string{"cuelist.yaml": `cuelist:
  id: manual
  cues:
    - {id: DEPLOY, agents: [ok], go: manual}
---
agent: {id: ok, command: ["true"]}
`})
	if code, out, errs := runOrch(t, dir, "run", "cuelist.yaml"); code != exitPaused {
		t.Fatalf("orch run: exit %d\n%s%s", code, out, errs)
	}
	rcv.Mu.Lock()
	if rcv.Requests != 0 {
		t.Errorf("orch run without --otel sent %d requests", rcv.Requests)
	}
	rcv.Mu.Unlock()
	if code, out, errs := runOrch(t, dir, "go", "last", "DEPLOY", "--otel"); code != 0 {
		t.Fatalf("orch go: exit %d\n%s%s", code, out, errs)
	}
	rcv.Mu.Lock()
	defer rcv.Mu.Unlock()
	names := map[string]bool{}
	for _, s := range rcv.Spans {
		names[s.Name] = true
	}
	for _, want := range []string{"run manual", "cue DEPLOY", "invoke_agent ok"} {
		if !names[want] {
			t.Errorf("no span %q among %v", want, names)
		}
	}
}

// A collector nobody listens at does not fail the run, over either
// protocol: it completes (exit 0) and one warning names the endpoint and
// says the spans were not exported.
func TestOtelUnreachableCollector(t *testing.T) {
	for _, tc := range []struct{ protocol, path string }{{"http/protobuf", "/v1/traces"}, {"grpc", ""}} {
		t.Run(tc.protocol, func(t *testing.T) {
			clearOtelEnv(t)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close() // a port nobody listens on now
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tc.protocol)
			dir := notifyDir(t, map[string]string{"cuelist.yaml": tracedCuelist})
			code, out, errs := runOrch(t, dir, "run", "cuelist.yaml")
			if code != 0 {
				t.Fatalf("orch run: exit %d\n%s%s", code, out, errs)
			}
			if n := strings.Count(errs, "warning"); n != 1 || !strings.Contains(errs, "not exported to http://"+addr+tc.path+": ") {
				t.Errorf("want one warning, about the spans not exported to http://%s%s:\n%s", addr, tc.path, errs)
			}
		})
	}
}
