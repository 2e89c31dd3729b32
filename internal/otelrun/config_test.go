package otelrun

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// Which variables turn the export on, which protocol it speaks, where it
// goes, and what is said about what orch does not follow.
func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		force    bool
		endpoint string // "": off
		protocol string
		warn     string
	}{
		{name: "nothing set", env: nil},
		{name: "only a service name", env: map[string]string{"OTEL_SERVICE_NAME": "x"}},
		{name: "--otel alone", force: true, endpoint: "http://localhost:4318/v1/traces", protocol: ProtocolHTTPProtobuf},
		{name: "--otel alone, grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, force: true, endpoint: "http://localhost:4317", protocol: ProtocolGRPC},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example:4318/"}, endpoint: "https://c.example:4318/v1/traces", protocol: ProtocolHTTPProtobuf},
		{name: "traces endpoint as given", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b/otlp"}, endpoint: "http://b/otlp", protocol: ProtocolHTTPProtobuf},
		{name: "sdk disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_SDK_DISABLED": "TRUE"}},
		{name: "exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_TRACES_EXPORTER": "none"}},
		{name: "--otel over none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_TRACES_EXPORTER": "none"}, force: true, endpoint: "http://a/v1/traces", protocol: ProtocolHTTPProtobuf},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, endpoint: "http://a:4317", protocol: ProtocolGRPC},
		{name: "http/json", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, endpoint: "http://a/v1/traces", protocol: ProtocolHTTPJSON},
		{name: "traces protocol wins", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
			endpoint: "http://a", protocol: ProtocolGRPC},
		{name: "unknown protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, endpoint: "http://a/v1/traces", protocol: ProtocolHTTPProtobuf,
			warn: "OTEL_EXPORTER_OTLP_PROTOCOL=thrift: not grpc, http/protobuf or http/json: http/protobuf is used"},
		{name: "zipkin", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_TRACES_EXPORTER": "zipkin"}, endpoint: "http://a/v1/traces", protocol: ProtocolHTTPProtobuf,
			warn: "OTEL_TRACES_EXPORTER=zipkin: orch exports traces with otlp only"},
		{name: "no scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
			warn: `OpenTelemetry endpoint "collector:4318/v1/traces" is not an http:// or https:// URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, warnings := FromEnv(envOf(tc.env), tc.force)
			endpoint, protocol := "", ""
			if cfg != nil {
				endpoint, protocol = cfg.Endpoint, cfg.Protocol
			}
			if endpoint != tc.endpoint || protocol != tc.protocol {
				t.Errorf("endpoint %q over %q, want %q over %q", endpoint, protocol, tc.endpoint, tc.protocol)
			}
			if all := strings.Join(warnings, "\n"); tc.warn == "" && all != "" || !strings.Contains(all, tc.warn) {
				t.Errorf("warnings %q, want %q", all, tc.warn)
			}
		})
	}
}

// The resource is the SDK's, from OTEL_RESOURCE_ATTRIBUTES (percent-decoded)
// and OTEL_SERVICE_NAME, which wins; service.name is orch without them.
func TestResourceFromEnv(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	res, err := newResource()
	if v, _ := res.Set().Value("service.name"); err != nil || v.AsString() != "orch" {
		t.Errorf("default service.name %q (%v), want orch", v.AsString(), err)
	}
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=ignored,deployment.environment=ci%2Fmain")
	t.Setenv("OTEL_SERVICE_NAME", "nightly")
	res, err = newResource()
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[attribute.Key]string{"service.name": "nightly", "deployment.environment": "ci/main", "telemetry.sdk.language": "go"} {
		if v, _ := res.Set().Value(key); v.AsString() != want {
			t.Errorf("%s = %q, want %q", key, v.AsString(), want)
		}
	}
}

// What the SDK says of a malformed variable is a warning before the run,
// without the variable's value (a header's may be a token).
func TestSDKWarningsLeaveValuesOut(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "s3cr3t-token-only")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	cfg, _ := FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}), false)
	tr, warnings := New(cfg, "c", "dev")
	defer tr.Finish()
	all := strings.Join(warnings, "\n")
	if !strings.Contains(all, "OpenTelemetry: parse headers") || strings.Contains(all, "s3cr3t") {
		t.Errorf("warnings %q: want one about the headers, without their value", all)
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
	env := map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/v1/traces"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	cfg, _ := FromEnv(envOf(env), false)
	tr, _ := New(cfg, "c", "dev")
	warn := tr.Finish() // nothing began: nothing to send
	if warn != "" {
		t.Fatalf("warning with nothing to send: %s", warn)
	}
	tr, _ = New(cfg, "c", "dev")
	tr.Event(runEvent("run/started"))
	warn = tr.Finish()
	if !strings.Contains(warn, "1 span(s) of the run were not exported to "+srv.URL+"/v1/traces") || !strings.Contains(warn, "gave up after waiting 50ms") {
		t.Errorf("warning %q", warn)
	}
}
