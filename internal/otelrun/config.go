// Package otelrun exports a run as an OpenTelemetry trace: a span for the
// run, one per cue (and child task), one per attempt, built from the run's
// event log as orch observes it, and sent to an OTLP collector over
// HTTP with the JSON encoding. It needs no OpenTelemetry library: the spans
// are data rebuilt from events whose times are known, and a small exporter
// keeps orch's binary and start-up as they are.
//
// Nothing is sent unless asked: the standard OTEL_EXPORTER_OTLP_* variables,
// or orch's --otel flag.
package otelrun

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultEndpoint is where --otel sends when no OTEL_EXPORTER_OTLP_*
// endpoint is set: a collector on this machine (OTLP/HTTP's default port).
const DefaultEndpoint = "http://localhost:4318"

// defaultTimeout bounds one export request, as OTEL_EXPORTER_OTLP_TIMEOUT's
// default does.
const defaultTimeout = 10 * time.Second

// Config says where and how a run's trace is sent.
type Config struct {
	URL      string            // the traces URL: ENDPOINT/v1/traces, or the traces endpoint as given
	Headers  map[string]string // OTEL_EXPORTER_OTLP_HEADERS (and _TRACES_HEADERS)
	Timeout  time.Duration     // one request
	Resource []Attr            // service.name, OTEL_RESOURCE_ATTRIBUTES
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
	cfg = &Config{Timeout: defaultTimeout, Headers: map[string]string{}}
	switch {
	case traces != "":
		cfg.URL = traces
	case endpoint != "":
		cfg.URL = strings.TrimRight(endpoint, "/") + "/v1/traces"
	default:
		cfg.URL = DefaultEndpoint + "/v1/traces"
	}
	if u, err := url.Parse(cfg.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, append(warnings, fmt.Sprintf("OpenTelemetry endpoint %q is not an http:// or https:// URL: the run is not exported", cfg.URL))
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(name)); p != "" && p != "http/json" {
			warnings = append(warnings, fmt.Sprintf("%s=%s: orch sends OTLP as http/json only, and does so", name, p))
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, kv := range splitList(getenv(name)) {
			k, v, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				warnings = append(warnings, fmt.Sprintf("%s: %q is not key=value: left out", name, kv)) // never the value: it may be a token
				continue
			}
			cfg.Headers[k] = unescape(strings.TrimSpace(v))
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"} {
		if s := strings.TrimSpace(getenv(name)); s != "" {
			ms, err := strconv.Atoi(s)
			if err != nil || ms <= 0 {
				warnings = append(warnings, fmt.Sprintf("%s=%s: not a positive number of milliseconds: left out", name, s))
				continue
			}
			cfg.Timeout = time.Duration(ms) * time.Millisecond
		}
	}
	cfg.Resource = resource(getenv)
	cfg.Parent, cfg.TraceState = getenv("TRACEPARENT"), getenv("TRACESTATE")
	return cfg, warnings
}

// resource is the resource of the spans: OTEL_RESOURCE_ATTRIBUTES, with
// service.name from OTEL_SERVICE_NAME, else from those, else "orch".
func resource(getenv func(string) string) []Attr {
	service := "orch"
	var attrs []Attr
	for _, kv := range splitList(getenv("OTEL_RESOURCE_ATTRIBUTES")) {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			continue
		}
		if v = unescape(strings.TrimSpace(v)); k == "service.name" {
			service = v
			continue
		}
		attrs = append(attrs, Attr{k, v})
	}
	if s := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); s != "" {
		service = s
	}
	return append([]Attr{{"service.name", service}}, attrs...)
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) != "" {
			out = append(out, part)
		}
	}
	return out
}

// unescape decodes a W3C baggage-style value (percent-encoded); one that
// does not decode is kept as written.
func unescape(v string) string {
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}
