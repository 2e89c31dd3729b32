package otelrun

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// exportWait bounds the wait at the run's end for the spans still to send
// (a variable for the tests).
var exportWait = 5 * time.Second

// newExporter is the OTLP trace exporter cfg names. The exporters read the
// OTEL_EXPORTER_OTLP_* variables themselves; orch only picks the protocol,
// names the endpoint when no variable does (plain http on this machine, as
// --otel promises), and turns retries off: the run's end waits at most
// exportWait, and an exporter retrying after 5 s would spend it all on an
// unreachable collector.
func newExporter(cfg *Config) (sdktrace.SpanExporter, error) {
	ctx := context.Background()
	if cfg.Protocol == ProtocolGRPC {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if cfg.Default {
			opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
	if cfg.Default {
		opts = append(opts, otlptracehttp.WithEndpointURL(cfg.Endpoint))
	}
	return otlptracehttp.New(ctx, opts...)
}

// newResource is the spans' resource: service.name orch unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise (the SDK
// reads them), and the SDK's own telemetry.sdk.* attributes.
func newResource() (*resource.Resource, error) {
	return resource.New(context.Background(),
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "orch")),
		resource.WithFromEnv(), // detected last: wins over the two above
	)
}

// delivery counts what reached the collector, and keeps the first error
// for the warning: the exporter's, or one the SDK reported otherwise (a
// certificate file it could not read, a malformed header).
type delivery struct {
	sdktrace.SpanExporter

	mu    sync.Mutex
	sent  int
	err   error
	setup []string // while the exporter is made: what the SDK said of its variables
	ready bool
}

func (d *delivery) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := d.SpanExporter.ExportSpans(ctx, spans)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.noteLocked(err)
	} else {
		d.sent += len(spans)
	}
	return err
}

func (d *delivery) note(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.noteLocked(err)
}

func (d *delivery) noteLocked(err error) {
	if !d.ready {
		d.setup = append(d.setup, "OpenTelemetry: "+plainErr(err).Error())
		return
	}
	if d.err == nil && err != nil {
		d.err = plainErr(err)
	}
}

// plainErr drops the URL net/http puts in its errors: the warning names
// the endpoint once, without what its URL may hold (a user, a query).
func plainErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// report says why spans were not sent, or "" when all were.
func (d *delivery) report(ended int, endpoint string, gaveUp bool) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	lost := ended - d.sent
	if lost <= 0 {
		return ""
	}
	why := d.err
	switch {
	case why != nil:
	case gaveUp:
		why = fmt.Errorf("gave up after waiting %s at the run's end", exportWait)
	default:
		why = errors.New("the export queue was full (OTEL_BSP_MAX_QUEUE_SIZE)")
	}
	return fmt.Sprintf("OpenTelemetry: %d span(s) of the run were not exported to %s: %v", lost, safeURL(endpoint), why)
}

// setupDone ends the making of the exporter and returns what the SDK
// reported meanwhile (an unreadable certificate, a malformed header), to
// be said before the run.
func (d *delivery) setupDone() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ready = true
	return d.setup
}

// quietSDK routes what the OpenTelemetry SDK reports process-wide to d
// instead of its default logger on stderr: errors become warnings (their
// key-value details are left out: a header's value may be a token), and
// informational messages are dropped.
func quietSDK(d *delivery) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(d.note))
	otel.SetLogger(logr.New(errorSink{d}))
}

// errorSink is a logr.LogSink that keeps only errors, in d.
type errorSink struct{ d *delivery }

func (errorSink) Init(logr.RuntimeInfo)                   {}
func (errorSink) Enabled(int) bool                        { return false }
func (errorSink) Info(int, string, ...any)                {}
func (s errorSink) WithValues(...any) logr.LogSink        { return s }
func (s errorSink) WithName(string) logr.LogSink          { return s }
func (s errorSink) Error(err error, msg string, _ ...any) { s.d.note(fmt.Errorf("%s: %w", msg, err)) }
