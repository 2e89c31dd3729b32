// Package otlptest is an OTLP trace collector for tests: it receives over
// HTTP (protobuf or JSON, gzip or not, plain or TLS) and gRPC, and keeps the
// spans it was sent, decoded.
package otlptest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/proto"
)

// Receiver is an OTLP collector on loopback: over HTTP it decodes protobuf
// or JSON requests (by their Content-Type), over gRPC the trace service's
// calls. Lock Mu to read what it received.
type Receiver struct {
	collectortrace.UnimplementedTraceServiceServer

	Mu       sync.Mutex
	Requests int
	Bad      []string // what was not an OTLP traces request
	Spans    []Span
	Resource map[string]string // the last request's resource attributes
	Auth     string            // the last request's authorization header
	Gzipped  int               // requests that came compressed
}

// Span is a received span, ids in hex and attribute values as text.
type Span struct {
	TraceID, SpanID, ParentSpanID string
	Name                          string
	Attributes                    map[string]string
	Events                        []string
	StatusCode                    int
	StatusMessage                 string
}

// Attr is an attribute's value as text.
func (s Span) Attr(key string) string { return s.Attributes[key] }

// HasEvent says whether the span has an event of that name.
func (s Span) HasEvent(name string) bool {
	for _, e := range s.Events {
		if e == name {
			return true
		}
	}
	return false
}

// ServeHTTPURL starts the receiver's OTLP/HTTP endpoint until the test
// ends: its base URL.
func (o *Receiver) ServeHTTPURL(t testing.TB) string {
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	return srv.URL
}

// ServeTLS starts the receiver's OTLP/HTTP endpoint over TLS: its base
// URL, and a PEM file of the certificate that a client must trust.
func (o *Receiver) ServeTLS(t testing.TB) (url, certFile string) {
	srv := httptest.NewTLSServer(o)
	t.Cleanup(srv.Close)
	certFile = filepath.Join(t.TempDir(), "collector.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(certFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL, certFile
}

// ServeGRPC starts the receiver's OTLP/gRPC endpoint: its http:// URL.
func (o *Receiver) ServeGRPC(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.StatsHandler(o))
	collectortrace.RegisterTraceServiceServer(srv, o)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return "http://" + ln.Addr().String()
}

// ServeHTTP is the OTLP/HTTP traces endpoint, /v1/traces.
func (o *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Header.Get("Content-Encoding") == "gzip" {
		if zr, err := gzip.NewReader(r.Body); err == nil {
			body, _ = io.ReadAll(zr)
		}
		o.Mu.Lock()
		o.Gzipped++
		o.Mu.Unlock()
	} else {
		body, _ = io.ReadAll(r.Body)
	}
	var req collectortrace.ExportTraceServiceRequest
	var err error
	switch ct := r.Header.Get("Content-Type"); {
	case r.URL.Path != "/v1/traces" || r.Method != http.MethodPost:
		err = &badRequest{r.Method + " " + r.URL.Path}
	case ct == "application/x-protobuf":
		err = proto.Unmarshal(body, &req)
	case ct == "application/json":
		err = unmarshalOTLPJSON(body, &req)
	default:
		err = &badRequest{"Content-Type " + ct}
	}
	if err != nil {
		o.Mu.Lock()
		o.Requests++
		o.Bad = append(o.Bad, err.Error())
		o.Mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.receive(&req, r.Header.Get("Authorization"))
	w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
	if r.Header.Get("Content-Type") == "application/json" {
		_, _ = io.WriteString(w, "{}")
	}
}

// Export is the gRPC trace service's call.
func (o *Receiver) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	o.receive(req, strings.Join(md.Get("authorization"), ","))
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// HandleRPC, TagRPC, TagConn and HandleConn make the receiver its gRPC
// server's stats.Handler, to see how calls came compressed.
func (o *Receiver) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok && h.Compression == "gzip" {
		o.Mu.Lock()
		o.Gzipped++
		o.Mu.Unlock()
	}
}

func (o *Receiver) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (o *Receiver) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (o *Receiver) HandleConn(context.Context, stats.ConnStats)                       {}

type badRequest struct{ what string }

func (b *badRequest) Error() string { return "not an OTLP traces request: " + b.what }

func (o *Receiver) receive(req *collectortrace.ExportTraceServiceRequest, auth string) {
	o.Mu.Lock()
	defer o.Mu.Unlock()
	o.Requests++
	o.Auth = auth
	for _, rs := range req.ResourceSpans {
		o.Resource = attrText(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				span := Span{TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentSpanID: hex.EncodeToString(s.ParentSpanId), Name: s.Name, Attributes: attrText(s.Attributes),
					StatusCode: int(s.GetStatus().GetCode()), StatusMessage: s.GetStatus().GetMessage()}
				for _, e := range s.Events {
					span.Events = append(span.Events, e.Name)
				}
				o.Spans = append(o.Spans, span)
			}
		}
	}
}

func attrText(attrs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, a := range attrs {
		switch v := a.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			out[a.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[a.Key] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_DoubleValue:
			out[a.Key] = strconv.FormatFloat(v.DoubleValue, 'g', -1, 64)
		case *commonpb.AnyValue_BoolValue:
			out[a.Key] = strconv.FormatBool(v.BoolValue)
		}
	}
	return out
}

// unmarshalOTLPJSON decodes OTLP/JSON (opentelemetry-proto's JSON mapping:
// ids in hex, 64-bit integers as decimal strings) into the protobuf types,
// the fields the tests read.
func unmarshalOTLPJSON(body []byte, req *collectortrace.ExportTraceServiceRequest) error {
	type jsonAttr struct {
		Key   string `json:"key"`
		Value struct {
			StringValue *string  `json:"stringValue"`
			IntValue    *string  `json:"intValue"`
			DoubleValue *float64 `json:"doubleValue"`
			BoolValue   *bool    `json:"boolValue"`
		} `json:"value"`
	}
	var doc struct {
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
					Events       []struct {
						Name string `json:"name"`
					} `json:"events"`
					Status struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"status"`
				} `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return err
	}
	attrs := func(in []jsonAttr) []*commonpb.KeyValue {
		var out []*commonpb.KeyValue
		for _, a := range in {
			v := &commonpb.AnyValue{}
			switch {
			case a.Value.StringValue != nil:
				v.Value = &commonpb.AnyValue_StringValue{StringValue: *a.Value.StringValue}
			case a.Value.IntValue != nil:
				n, _ := strconv.ParseInt(*a.Value.IntValue, 10, 64)
				v.Value = &commonpb.AnyValue_IntValue{IntValue: n}
			case a.Value.DoubleValue != nil:
				v.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: *a.Value.DoubleValue}
			case a.Value.BoolValue != nil:
				v.Value = &commonpb.AnyValue_BoolValue{BoolValue: *a.Value.BoolValue}
			}
			out = append(out, &commonpb.KeyValue{Key: a.Key, Value: v})
		}
		return out
	}
	unhex := func(s string) []byte { b, _ := hex.DecodeString(s); return b }
	for _, rs := range doc.ResourceSpans {
		prs := &tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: attrs(rs.Resource.Attributes)}}
		for _, ss := range rs.ScopeSpans {
			pss := &tracepb.ScopeSpans{}
			for _, s := range ss.Spans {
				ps := &tracepb.Span{TraceId: unhex(s.TraceID), SpanId: unhex(s.SpanID), ParentSpanId: unhex(s.ParentSpanID),
					Name: s.Name, Attributes: attrs(s.Attributes),
					Status: &tracepb.Status{Code: tracepb.Status_StatusCode(s.Status.Code), Message: s.Status.Message}}
				for _, e := range s.Events {
					ps.Events = append(ps.Events, &tracepb.Span_Event{Name: e.Name})
				}
				pss.Spans = append(pss.Spans, ps)
			}
			prs.ScopeSpans = append(prs.ScopeSpans, pss)
		}
		req.ResourceSpans = append(req.ResourceSpans, prs)
	}
	return nil
}
