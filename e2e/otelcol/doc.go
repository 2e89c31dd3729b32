// Package otelcol holds the end-to-end test of orch's OpenTelemetry export
// through a real OpenTelemetry Collector, behind the build tag otelcol_e2e:
// it builds orch and the collector of tools/otelcol (the collector's own Go
// modules: its OTLP receiver and OTLP/HTTP exporter; about a minute the
// first time, then Go's build cache), starts the collector on loopback, and
// runs a cuelist with OTEL_EXPORTER_OTLP_PROTOCOL grpc, http/protobuf (gzip)
// and http/json; the collector forwards what it accepts to the test as
// OTLP/JSON, where the run's trace is checked.
//
//	go test -tags otelcol_e2e -count=1 -v ./e2e/otelcol
package otelcol
