package record

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/redact"
)

// filled returns a value of type t with every string it can hold set to s
// (map keys and list items included), and a large integer in every free-form
// map, to check what touches every field.
func filled(t reflect.Type, s string) reflect.Value {
	v := reflect.New(t).Elem()
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		b, _ := json.Marshal(map[string]any{"text": s})
		v.SetBytes(b)
	case t == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 11, 23, 1, 2, 3, 456789000, time.UTC)))
	case t.Kind() == reflect.String:
		v.SetString(s)
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		v.SetInt(7)
	case t.Kind() == reflect.Float64:
		v.SetFloat(2.5)
	case t.Kind() == reflect.Bool:
		v.SetBool(true)
	case t.Kind() == reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		v.Elem().Set(filled(t.Elem(), s))
	case t.Kind() == reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(t, 0, 1), filled(t.Elem(), s)))
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String:
		v.Set(reflect.ValueOf(map[string]string{s: s}))
	case t.Kind() == reflect.Map:
		m := map[string]any{s: s, "list": []any{s, json.Number("12345678901234567890")}, "n": json.Number("12345678901234567890")}
		v.Set(reflect.ValueOf(m))
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			v.Field(i).Set(filled(t.Field(i).Type, s))
		}
	}
	return v
}

// TestEventDataRoundTrip: what the recorder stores decodes to the same
// value, which encodes to the same bytes (orch events --output json prints
// what orch run printed).
func TestEventDataRoundTrip(t *testing.T) {
	for _, p := range payloads {
		typ, dt := p.EventType(), reflect.TypeOf(p)
		data := filled(dt, "a \"quoted\" <b>&</b>").Interface().(EventData)
		if err := CheckEventData(typ, data); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		raw, err := json.Marshal(data)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		back, err := DecodeEventData(typ, raw)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(raw) || reflect.TypeOf(back) != dt {
			t.Errorf("%s: stored %s, read back %T %s", typ, raw, back, again)
		}
		line, _ := json.Marshal(Event{RunID: "r1", Seq: 3, Type: typ, Cue: "A", Data: data})
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil || ev.Seq != 3 || ev.Cue != "A" || reflect.TypeOf(ev.Data) != dt {
			t.Errorf("%s: event %s read back as %+v, %v", typ, line, ev, err)
		}
		if again, _ := json.Marshal(ev); string(again) != string(line) {
			t.Errorf("%s: event %s read back as %s", typ, line, again)
		}
	}
	if d, err := DecodeEventData(EvNote, nil); d != nil || err != nil {
		t.Errorf("no data: %v, %v", d, err)
	}
}

// TestUndecodableEventData: data that does not fit its type, or of a type
// this orch does not know, is kept as stored with the reason.
func TestUndecodableEventData(t *testing.T) {
	for typ, raw := range map[string]string{
		EvCueState:       `{"outputs":[1,2]}`,
		"future/thing":   `{"x":1}`,
		EvNote:           `{"why":"older orch"}`,
		EvAttemptEnded:   `{"pid":"twelve"}`,
		EvUserMessage:    `{"kind":"message"`,
		EvRunStarted:     `[]`,
		EvQuestionClosed: `"q1"`,
	} {
		d, err := DecodeEventData(typ, json.RawMessage(raw))
		r, ok := d.(RawData)
		if err == nil || !ok || r.Err != err || string(r.JSON) != raw {
			t.Errorf("%s %s: %#v, %v", typ, raw, d, err)
		}
		if b, _ := json.Marshal(Event{Type: typ, Data: d}); !strings.HasSuffix(string(b), `"data":`+raw+`}`) && json.Valid([]byte(raw)) {
			t.Errorf("%s: encoded as %s", typ, b)
		}
	}
}

// TestEventDataRedacted: every string of every payload is redacted (a field
// added without its redaction fails here).
func TestEventDataRedacted(t *testing.T) {
	const secret = "tok-0123456789-secret"
	d := redact.New([]string{"API_TOKEN=" + secret}, nil)
	for _, p := range payloads {
		typ, dt := p.EventType(), reflect.TypeOf(p)
		data := filled(dt, "x "+secret+" y").Interface().(EventData)
		if specs, ok := data.(CueSpecsData); ok { // fingerprints are hex digests, kept as they are
			for id := range specs.Hashes {
				specs.Hashes[id] = strings.Repeat("0f", 32)
			}
		}
		before, _ := json.Marshal(data)
		masked := data.redacted(d)
		raw, err := json.Marshal(masked)
		if err != nil || strings.Contains(string(raw), "0123456789-secret") ||
			strings.Contains(string(before), secret) != strings.Contains(string(raw), "[redacted:API_TOKEN]") {
			t.Errorf("%s: %s, %v", typ, raw, err)
		}
		if reflect.TypeOf(masked) != dt {
			t.Errorf("%s: redacted to a %T", typ, masked)
		}
		if after, _ := json.Marshal(data); string(after) != string(before) {
			t.Errorf("%s: redacting changed the original: %s", typ, after)
		}
	}
}

// TestFingerprintsKeptWhole: a cue's fingerprint is a digest orch computed;
// a declared secret that happens to be part of it is no secret of the spec's,
// and masking it would make orch retry see the cue as changed.
func TestFingerprintsKeptWhole(t *testing.T) {
	const digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	d := redact.New([]string{"PIN=d081"}, []string{"PIN"})
	masked := CueSpecsData{Hashes: map[string]string{"build d081": digest}}.redacted(d).(CueSpecsData)
	if len(masked.Hashes) != 1 || masked.Hashes["build [redacted:PIN]"] != digest {
		t.Errorf("fingerprints after masking: %v", masked.Hashes)
	}
}

// TestOnePayloadPerType: every payload names an event type of its own, and
// RawData (what a reader could not decode) is none of them.
func TestOnePayloadPerType(t *testing.T) {
	seen := map[string]reflect.Type{}
	for _, p := range payloads {
		typ := p.EventType()
		if prev, ok := seen[typ]; ok || typ == "" {
			t.Errorf("%T names event type %q, which %v names too", p, typ, prev)
		}
		seen[typ] = reflect.TypeOf(p)
	}
	if err := CheckEventData(EvNote, RawData{JSON: []byte(`{}`)}); err == nil {
		t.Error("a RawData was accepted as a note's data")
	}
	if err := CheckEventData(EvCueState, AttemptEndedData{}); err == nil || !strings.Contains(err.Error(), "must be a record.CueStateData") {
		t.Errorf("an attempt's data on a cue/state event: %v", err)
	}
}
