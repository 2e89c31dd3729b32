// Package otelrun exports a run as an OpenTelemetry trace: a span for the
// run, one per cue (and child task), one per attempt, built with the
// OpenTelemetry SDK from the run's event log as orch observes it (each span
// begins and ends at its events' times), and sent by the SDK's OTLP trace
// exporters over HTTP (protobuf or JSON) or gRPC, configured by the standard
// OTEL_EXPORTER_OTLP_* variables as in any other instrumented program.
//
// Nothing is sent unless asked: an OTEL_EXPORTER_OTLP_*ENDPOINT variable,
// or orch's --otel flag.
package otelrun

import (
	"fmt"
	"net/url"
	"strings"
)

// The protocols of OTEL_EXPORTER_OTLP_PROTOCOL; HTTP with protobuf is the
// specification's default.
const (
	ProtocolGRPC         = "grpc"
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolHTTPJSON     = "http/json"
)

// DefaultEndpoint is where --otel sends over HTTP when no
// OTEL_EXPORTER_OTLP_* endpoint is set: a collector on this machine
// (OTLP/HTTP's default port; gRPC's is 4317).
const DefaultEndpoint = "http://localhost:4318"

const defaultGRPCEndpoint = "http://localhost:4317"

// Config says what orch decides itself about exporting a run; the
// exporters read the rest of the OTEL_EXPORTER_OTLP_* variables (headers,
// TLS certificates, compression, timeouts, insecure) themselves.
type Config struct {
	Protocol string // ProtocolGRPC, ProtocolHTTPProtobuf or ProtocolHTTPJSON
	// Endpoint is where the spans go, as the exporter will use it: the
	// traces URL over HTTP, the collector's URL over gRPC.
	Endpoint string
	// Default is set when no variable names an endpoint: the exporter is
	// then told Endpoint (plain http on this machine, as --otel promises).
	Default bool
	// Parent is orch's own TRACEPARENT (and TRACESTATE), when it was
	// started inside a trace: the run's span is then its child.
	Parent     string
	TraceState string
}

// FromEnv reads the OTEL_* variables through getenv. It returns nil when
// nothing is to be exported: no endpoint is set and force (--otel) is not
// given, or OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none say so
// (--otel overrides both). warnings say what was set and is not followed.
func FromEnv(getenv func(string) string, force bool) (cfg *Config, warnings []string) {
	endpoint, traces := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if !force {
		if endpoint == "" && traces == "" {
			return nil, nil
		}
		if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
			return nil, nil
		}
	}
	for _, exp := range strings.Split(getenv("OTEL_TRACES_EXPORTER"), ",") {
		switch exp = strings.TrimSpace(exp); exp {
		case "", "otlp":
		case "none":
			if !force {
				return nil, nil
			}
		default:
			warnings = append(warnings, fmt.Sprintf("OTEL_TRACES_EXPORTER=%s: orch exports traces with otlp only", exp))
		}
	}
	cfg = &Config{Protocol: ProtocolHTTPProtobuf}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} { // the second wins
		switch p := strings.TrimSpace(getenv(name)); p {
		case "":
		case ProtocolGRPC, ProtocolHTTPProtobuf, ProtocolHTTPJSON:
			cfg.Protocol = p
		default:
			cfg.Protocol = ProtocolHTTPProtobuf
			warnings = append(warnings, fmt.Sprintf("%s=%s: not grpc, http/protobuf or http/json: http/protobuf is used", name, p))
		}
	}
	grpc := cfg.Protocol == ProtocolGRPC
	switch {
	case traces != "":
		cfg.Endpoint = traces // as given, by the specification
	case endpoint != "" && grpc:
		cfg.Endpoint = endpoint
	case endpoint != "":
		cfg.Endpoint = strings.TrimRight(endpoint, "/") + "/v1/traces"
	case grpc:
		cfg.Endpoint, cfg.Default = defaultGRPCEndpoint, true
	default:
		cfg.Endpoint, cfg.Default = DefaultEndpoint+"/v1/traces", true
	}
	if u, err := url.Parse(cfg.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, append(warnings, fmt.Sprintf("OpenTelemetry endpoint %q is not an http:// or https:// URL: the run is not exported", cfg.Endpoint))
	}
	cfg.Parent, cfg.TraceState = getenv("TRACEPARENT"), getenv("TRACESTATE")
	return cfg, warnings
}

// safeURL is a URL without its user info and query (they may hold secrets).
func safeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the endpoint"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
