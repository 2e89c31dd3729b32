package otelrun

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Attr is one attribute: its value a string, an int64, a float64 or a bool.
type Attr struct {
	Key   string
	Value any
}

// Span kinds and status codes, as OTLP numbers them.
const (
	kindInternal = 1
	kindClient   = 3

	statusUnset = 0
	statusOK    = 1
	statusError = 2
)

// maxEvents bounds the events of one span (the SDKs' default limit): a
// guard flood must not make a span of megabytes.
const maxEvents = 128

// span is one finished (or still open) span.
type span struct {
	traceID       [16]byte
	id, parent    [8]byte
	traceState    string
	name          string
	kind          int
	start, end    time.Time
	attrs         []Attr
	events        []spanEvent
	droppedEvents int
	status        int
	message       string // the status's, with statusError
}

type spanEvent struct {
	at    time.Time
	name  string
	attrs []Attr
}

// set sets an attribute, replacing one of the same key.
func (s *span) set(key string, value any) {
	for i := range s.attrs {
		if s.attrs[i].Key == key {
			s.attrs[i].Value = value
			return
		}
	}
	s.attrs = append(s.attrs, Attr{key, value})
}

func (s *span) addEvent(at time.Time, name string, attrs ...Attr) {
	if len(s.events) >= maxEvents {
		s.droppedEvents++
		return
	}
	s.events = append(s.events, spanEvent{at: at, name: name, attrs: attrs})
}

// The OTLP/JSON encoding (opentelemetry-proto's JSON mapping): ids in hex,
// 64-bit integers (times in nanoseconds, intValue) as decimal strings.
type (
	jsonRequest struct {
		ResourceSpans []jsonResourceSpans `json:"resourceSpans"`
	}
	jsonResourceSpans struct {
		Resource   jsonResource     `json:"resource"`
		ScopeSpans []jsonScopeSpans `json:"scopeSpans"`
	}
	jsonResource struct {
		Attributes []jsonAttr `json:"attributes"`
	}
	jsonScopeSpans struct {
		Scope jsonScope  `json:"scope"`
		Spans []jsonSpan `json:"spans"`
	}
	jsonScope struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	}
	jsonSpan struct {
		TraceID            string      `json:"traceId"`
		SpanID             string      `json:"spanId"`
		TraceState         string      `json:"traceState,omitempty"`
		ParentSpanID       string      `json:"parentSpanId,omitempty"`
		Name               string      `json:"name"`
		Kind               int         `json:"kind"`
		StartTimeUnixNano  string      `json:"startTimeUnixNano"`
		EndTimeUnixNano    string      `json:"endTimeUnixNano"`
		Attributes         []jsonAttr  `json:"attributes,omitempty"`
		Events             []jsonEvent `json:"events,omitempty"`
		DroppedEventsCount int         `json:"droppedEventsCount,omitempty"`
		Status             jsonStatus  `json:"status"`
	}
	jsonEvent struct {
		TimeUnixNano string     `json:"timeUnixNano"`
		Name         string     `json:"name"`
		Attributes   []jsonAttr `json:"attributes,omitempty"`
	}
	jsonStatus struct {
		Code    int    `json:"code,omitempty"`
		Message string `json:"message,omitempty"`
	}
	jsonAttr struct {
		Key   string         `json:"key"`
		Value map[string]any `json:"value"`
	}
)

// encode returns the body of one export request: the spans, under one
// resource and orch's instrumentation scope.
func encode(resource []Attr, scopeVersion string, spans []*span) ([]byte, error) {
	out := make([]jsonSpan, 0, len(spans))
	for _, s := range spans {
		js := jsonSpan{TraceID: hex.EncodeToString(s.traceID[:]), SpanID: hex.EncodeToString(s.id[:]),
			TraceState: s.traceState, Name: s.name, Kind: s.kind,
			StartTimeUnixNano: nanos(s.start), EndTimeUnixNano: nanos(s.end),
			Attributes: jsonAttrs(s.attrs), DroppedEventsCount: s.droppedEvents,
			Status: jsonStatus{Code: s.status, Message: s.message}}
		if s.parent != ([8]byte{}) {
			js.ParentSpanID = hex.EncodeToString(s.parent[:])
		}
		for _, ev := range s.events {
			js.Events = append(js.Events, jsonEvent{TimeUnixNano: nanos(ev.at), Name: ev.name, Attributes: jsonAttrs(ev.attrs)})
		}
		out = append(out, js)
	}
	return json.Marshal(jsonRequest{ResourceSpans: []jsonResourceSpans{{
		Resource:   jsonResource{Attributes: jsonAttrs(resource)},
		ScopeSpans: []jsonScopeSpans{{Scope: jsonScope{Name: "github.com/orch-cli/orch", Version: scopeVersion}, Spans: out}},
	}}})
}

func nanos(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

func jsonAttrs(attrs []Attr) []jsonAttr {
	var out []jsonAttr
	for _, a := range attrs {
		var v map[string]any
		switch x := a.Value.(type) {
		case string:
			v = map[string]any{"stringValue": x}
		case int64:
			v = map[string]any{"intValue": strconv.FormatInt(x, 10)}
		case int:
			v = map[string]any{"intValue": strconv.Itoa(x)}
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				continue // JSON has no such number
			}
			v = map[string]any{"doubleValue": x}
		case bool:
			v = map[string]any{"boolValue": x}
		default:
			continue
		}
		out = append(out, jsonAttr{Key: a.Key, Value: v})
	}
	return out
}
