package otelrun

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// Which variables turn the export on, where it goes, and what is said
// about what orch does not follow.
func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		force bool
		url   string // "": off
		warn  string
	}{
		{name: "nothing set", env: nil},
		{name: "only a service name", env: map[string]string{"OTEL_SERVICE_NAME": "x"}},
		{name: "--otel alone", force: true, url: "http://localhost:4318/v1/traces"},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example:4318/"}, url: "https://c.example:4318/v1/traces"},
		{name: "traces endpoint as given", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b/otlp"}, url: "http://b/otlp"},
		{name: "sdk disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_SDK_DISABLED": "TRUE"}},
		{name: "exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_TRACES_EXPORTER": "none"}},
		{name: "--otel over none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_TRACES_EXPORTER": "none"}, force: true, url: "http://a/v1/traces"},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, url: "http://a/v1/traces",
			warn: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: orch sends OTLP as http/json only"},
		{name: "zipkin", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_TRACES_EXPORTER": "zipkin"}, url: "http://a/v1/traces",
			warn: "OTEL_TRACES_EXPORTER=zipkin: orch exports traces with otlp only"},
		{name: "no scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
			warn: `OpenTelemetry endpoint "collector:4318/v1/traces" is not an http:// or https:// URL`},
		{name: "bad header", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_HEADERS": "tokenonly"}, url: "http://a/v1/traces",
			warn: `OTEL_EXPORTER_OTLP_HEADERS: "tokenonly" is not key=value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, warnings := FromEnv(envOf(tc.env), tc.force)
			url := ""
			if cfg != nil {
				url = cfg.URL
			}
			if url != tc.url {
				t.Errorf("URL %q, want %q", url, tc.url)
			}
			if all := strings.Join(warnings, "\n"); tc.warn == "" && all != "" || !strings.Contains(all, tc.warn) {
				t.Errorf("warnings %q, want %q", all, tc.warn)
			}
		})
	}
}

// Headers, the timeout and the resource from their variables.
func TestFromEnvDetails(t *testing.T) {
	cfg, warnings := FromEnv(envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":       "http://a",
		"OTEL_EXPORTER_OTLP_HEADERS":        "api-key=s%20ecret, x-team = ops",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=dev",
		"OTEL_EXPORTER_OTLP_TIMEOUT":        "2500",
		"OTEL_RESOURCE_ATTRIBUTES":          "service.name=ignored,deployment.environment=ci%2Fmain",
		"OTEL_SERVICE_NAME":                 "nightly",
		"TRACEPARENT":                       "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
	}), false)
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	if want := map[string]string{"api-key": "s ecret", "x-team": "dev"}; !reflect.DeepEqual(cfg.Headers, want) {
		t.Errorf("headers %v, want %v", cfg.Headers, want)
	}
	if cfg.Timeout != 2500*time.Millisecond {
		t.Errorf("timeout %s", cfg.Timeout)
	}
	if want := []Attr{{"service.name", "nightly"}, {"deployment.environment", "ci/main"}}; !reflect.DeepEqual(cfg.Resource, want) {
		t.Errorf("resource %v, want %v", cfg.Resource, want)
	}
	// orch started inside a trace: the run's span is its child, and the
	// agents' TRACEPARENT keeps its trace id.
	tr := New(cfg, "c", "dev")
	defer tr.Finish()
	env := tr.AgentEnv("CUE", "a", 1)
	if len(env) != 1 || !strings.HasPrefix(env[0], "TRACEPARENT=00-0af7651916cd43dd8448eb211c80319c-") {
		t.Errorf("agent env %v: not in orch's own trace", env)
	}
}

// A collector that never answers holds the run's end for exportWait at
// most, and the warning says the spans were given up.
func TestFinishIsBounded(t *testing.T) {
	defer func(d time.Duration) { exportWait = d }(exportWait)
	exportWait = 50 * time.Millisecond
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	tr := New(&Config{URL: srv.URL + "/v1/traces", Timeout: time.Hour, Resource: []Attr{{"service.name", "orch"}}}, "c", "dev")
	warn := tr.Finish() // nothing began: nothing to send
	if warn != "" {
		t.Fatalf("warning with nothing to send: %s", warn)
	}
	tr = New(&Config{URL: srv.URL + "/v1/traces", Timeout: time.Hour, Resource: []Attr{{"service.name", "orch"}}}, "c", "dev")
	tr.Event(runEvent("run/started"))
	warn = tr.Finish()
	if !strings.Contains(warn, "1 span(s) of the run were not exported") || !strings.Contains(warn, "gave up after waiting 50ms") {
		t.Errorf("warning %q", warn)
	}
}
