package otelrun

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// The OTLP/JSON encoding of a root span and a failed child, compared with
// a document written by hand from opentelemetry-proto's JSON mapping: ids
// in hex, times and intValue as decimal strings, the parent left out of a
// root, status code 2 with its message.
func TestEncodeOTLPJSON(t *testing.T) {
	t0 := time.Unix(1700000000, 5).UTC()
	root := &span{traceID: [16]byte{0x0a, 15: 0x01}, id: [8]byte{0x01, 7: 0x02}, name: "run deploy", kind: kindInternal,
		start: t0, end: t0.Add(time.Second), status: statusOK,
		attrs: []Attr{{"orch.run.id", "abc"}, {"orch.attempt", 2}, {"orch.cost_usd", 0.25}, {"orch.fallback", true},
			{"gen_ai.usage.input_tokens", int64(1200)}, {"skipped.nan", math.NaN()}}}
	child := &span{traceID: root.traceID, id: [8]byte{0x03}, parent: root.id, traceState: "k=v", name: "invoke_agent build", kind: kindClient,
		start: t0, end: t0.Add(2 * time.Millisecond), status: statusError, message: "exit 7", droppedEvents: 3,
		events: []spanEvent{{at: t0.Add(time.Millisecond), name: "go", attrs: []Attr{{"orch.reason", "now"}}}, {at: t0, name: "warning"}}}
	got, err := encode([]Attr{{"service.name", "orch"}}, "v1.2.3", []*span{root, child})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resourceSpans": [{
	  "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "orch"}}]},
	  "scopeSpans": [{
	    "scope": {"name": "github.com/orch-cli/orch", "version": "v1.2.3"},
	    "spans": [
	      {"traceId": "0a000000000000000000000000000001", "spanId": "0100000000000002",
	       "name": "run deploy", "kind": 1,
	       "startTimeUnixNano": "1700000000000000005", "endTimeUnixNano": "1700000001000000005",
	       "attributes": [
	         {"key": "orch.run.id", "value": {"stringValue": "abc"}},
	         {"key": "orch.attempt", "value": {"intValue": "2"}},
	         {"key": "orch.cost_usd", "value": {"doubleValue": 0.25}},
	         {"key": "orch.fallback", "value": {"boolValue": true}},
	         {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "1200"}}],
	       "status": {"code": 1}},
	      {"traceId": "0a000000000000000000000000000001", "spanId": "0300000000000000",
	       "traceState": "k=v", "parentSpanId": "0100000000000002",
	       "name": "invoke_agent build", "kind": 3,
	       "startTimeUnixNano": "1700000000000000005", "endTimeUnixNano": "1700000000002000005",
	       "events": [
	         {"timeUnixNano": "1700000000001000005", "name": "go", "attributes": [{"key": "orch.reason", "value": {"stringValue": "now"}}]},
	         {"timeUnixNano": "1700000000000000005", "name": "warning"}],
	       "droppedEventsCount": 3,
	       "status": {"code": 2, "message": "exit 7"}}]}]}]}`
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(want)); err != nil {
		t.Fatal(err)
	}
	if string(got) != compact.String() {
		t.Errorf("encoded:\n%s\nwant:\n%s", got, compact.String())
	}
}

// A span keeps at most maxEvents events and counts the others.
func TestSpanEventLimit(t *testing.T) {
	s := &span{}
	for range maxEvents + 5 {
		s.addEvent(time.Now(), "guard/warning")
	}
	if len(s.events) != maxEvents || s.droppedEvents != 5 {
		t.Errorf("%d events, %d dropped; want %d and 5", len(s.events), s.droppedEvents, maxEvents)
	}
}
