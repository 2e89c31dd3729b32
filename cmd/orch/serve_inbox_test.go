package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// appendEvents writes events (as JSON lines) through w, as a run's owner does.
func appendEvents(t *testing.T, w *store.DB, lines ...string) {
	t.Helper()
	for _, line := range lines {
		var ev record.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if err := w.Append(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
}

// liveOwner is run/started data's owner fields naming this process, so that
// the run counts as running (its lease is fresh, its pid alive).
func liveOwner() string {
	host, _ := os.Hostname()
	b, _ := json.Marshal(map[string]any{"owner_pid": os.Getpid(), "owner_host": host, "owner_token": "t"})
	return strings.Trim(string(b), "{}")
}

// TestServeInbox: GET /api/inbox lists, across runs and newest first, the
// questions asked of the person and the cues waiting for GO; not a question
// asked of an agent, nor what waits in a run whose owner died.
func TestServeInbox(t *testing.T) {
	srv, w := serveFixture(t, "")
	appendEvents(t, w,
		// live (now): a question to the person, one to an agent, a manual cue standing by.
		`{"run_id":"live","type":"run/started","data":{"cuelist":"l","cues":[{"id":"A","agents":["a"]},{"id":"M","agents":["m","n"],"manual":true}],`+liveOwner()+`}}`,
		`{"run_id":"live","type":"question/asked","cue":"A","agent":"a","attempt":1,"data":{"id":"q1","question":"Which <b>database</b>?","complexity":"deep","to":"person"}}`,
		`{"run_id":"live","type":"question/asked","cue":"A","agent":"a","attempt":1,"data":{"id":"q2","question":"to my parent","complexity":"quick","to":"boss"}}`,
		`{"run_id":"live","type":"cue/state","cue":"M","state":"standby"}`,
		// paused (earlier): a manual cue not yet approved, a manual one approved, an ordinary one.
		`{"run_id":"paused","at":"2026-01-01T11:00:00Z","type":"run/started","data":{"cuelist":"p","cues":[{"id":"B","agents":["b"]},{"id":"D","agents":["b"],"after":["B"],"manual":true},{"id":"E","agents":["b"],"manual":true}]}}`,
		`{"run_id":"paused","at":"2026-01-01T11:00:01Z","type":"cue/go-approved","cue":"E"}`,
		`{"run_id":"paused","at":"2026-01-01T11:00:02Z","type":"run/state","state":"paused","reason":"waiting for GO: D"}`,
		// dead: its owner is gone (no lease), its question waits for nobody.
		`{"run_id":"dead","at":"2026-01-01T12:00:00Z","type":"run/started","data":{"cuelist":"d","cues":[{"id":"A","agents":["a"]}]}}`,
		`{"run_id":"dead","at":"2026-01-01T12:00:01Z","type":"question/asked","cue":"A","agent":"a","attempt":1,"data":{"id":"q1","question":"lost","complexity":"quick","to":"person"}}`,
	)
	code, body := get(t, srv.URL+"/api/inbox")
	if code != 200 {
		t.Fatalf("GET /api/inbox: %d %s", code, body)
	}
	var got []map[string]string
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	want := []map[string]string{
		{"run": "live", "kind": "go", "id": "M", "cue": "M", "text": "M (m, n) waits for GO"},
		{"run": "live", "kind": "question", "id": "q1", "cue": "A", "text": "Which <b>database</b>?", "complexity": "deep", "asker": "a"},
		{"run": "paused", "kind": "go", "id": "D", "cue": "D", "text": "D (b) waits for GO", "at": "2026-01-01T11:00:02Z"},
	}
	if len(got) != len(want) {
		t.Fatalf("inbox:\n%s\nwant %d items", body, len(want))
	}
	for i := range want {
		for k, v := range want[i] {
			if got[i][k] != v {
				t.Errorf("item %d %s = %q, want %q (%s)", i, k, got[i][k], v, body)
			}
		}
	}
	if strings.Contains(body, "<b>") {
		t.Errorf("an agent's markup came back unescaped: %s", body)
	}
}

// sseReader reads Server-Sent Events: next returns the next event's name and data.
type sseReader struct{ sc *bufio.Scanner }

func openSSE(t *testing.T, ctx context.Context, url string) *sseReader {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	return &sseReader{sc: sc}
}

func (r *sseReader) next() (event, data string, ok bool) {
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case line == "" && event != "":
			return event, data, true
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
	return "", "", false
}

// TestServeStreamRuns: GET /api/stream starts with the run list and the
// inbox; a run started (by another handle, as by another process) while the
// client is connected comes in a later runs event, a question in a later
// inbox event; a client that connects again starts with both as they are.
func TestServeStreamRuns(t *testing.T) {
	srv, w := serveFixture(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	until := func(r *sseReader, what string, ok func(event, data string) bool) string {
		t.Helper()
		for {
			event, data, more := r.next()
			if !more {
				t.Fatalf("the stream ended before %s", what)
			}
			if strings.Contains(data, "<script>") {
				t.Errorf("unescaped data: %s", data)
			}
			if ok(event, data) {
				return data
			}
		}
	}
	r := openSSE(t, ctx, srv.URL+"/api/stream")
	event, data, _ := r.next()
	if event != "runs" || !strings.Contains(data, `"id":"r1"`) || strings.Contains(data, "\n") {
		t.Fatalf("first event: %s %s", event, data)
	}
	if event, data, _ = r.next(); event != "inbox" || data != "[]" {
		t.Fatalf("second event: %s %s", event, data)
	}
	appendEvents(t, w,
		`{"run_id":"r9","type":"run/started","data":{"cuelist":"later","cues":[{"id":"A","agents":["a"]}],`+liveOwner()+`}}`)
	until(r, "the new run", func(event, data string) bool { return event == "runs" && strings.Contains(data, `"id":"r9"`) })
	appendEvents(t, w,
		`{"run_id":"r9","type":"question/asked","cue":"A","agent":"a","attempt":1,"data":{"id":"q1","question":"Go on?","complexity":"quick","to":"person"}}`)
	until(r, "the question", func(event, data string) bool { return event == "inbox" && strings.Contains(data, `"text":"Go on?"`) })

	again := openSSE(t, ctx, srv.URL+"/api/stream")
	if event, data, _ := again.next(); event != "runs" || !strings.Contains(data, `"id":"r9"`) || !strings.Contains(data, `"open_questions":1`) {
		t.Errorf("reconnected, first event: %s %s", event, data)
	}
	if event, data, _ := again.next(); event != "inbox" || !strings.Contains(data, `"Go on?"`) {
		t.Errorf("reconnected, second event: %s %s", event, data)
	}
}

// TestServeEscalationAck: a high escalation is in GET /api/inbox (of a run
// in any state) with its severity until POST ack {"id"} acknowledges it;
// an unknown id is the client's error, a second ack says it was done.
func TestServeEscalationAck(t *testing.T) {
	srv, w := serveFixture(t, "")
	appendEvents(t, w,
		`{"run_id":"r1","type":"message/user","cue":"A","agent":"a","attempt":1,"data":{"kind":"escalation","from":"a","body":{"severity":"critical","error":"keys <b>leaked</b>"}}}`,
		`{"run_id":"r1","type":"message/user","cue":"A","agent":"a","attempt":1,"data":{"kind":"escalation","from":"a","body":{"severity":"low","error":"meh"}}}`)
	inbox := func() []map[string]string {
		t.Helper()
		code, body := get(t, srv.URL+"/api/inbox")
		var got []map[string]string
		if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
			t.Fatalf("GET /api/inbox: %d %s %v", code, body, err)
		}
		return got
	}
	got := inbox()
	if len(got) != 1 {
		t.Fatalf("inbox: %v, want the critical escalation only", got)
	}
	it := got[0]
	for k, v := range map[string]string{"run": "r1", "kind": "escalation", "severity": "critical", "text": "keys <b>leaked</b>", "asker": "a", "cue": "A"} {
		if it[k] != v {
			t.Errorf("the escalation's %s = %q, want %q (%v)", k, it[k], v, it)
		}
	}
	if code, body := post(t, srv.URL+"/api/runs/r1/ack", `{"id":"e999"}`); code != http.StatusBadRequest || !strings.Contains(body, `no high or critical escalation \"e999\"`) {
		t.Errorf("ack of no such escalation: %d %s", code, body)
	}
	if code, body := post(t, srv.URL+"/api/runs/r1/ack", `{"id":"`+it["id"]+`"}`, "Origin", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("a cross-origin ack: %d %s", code, body)
	}
	if code, body := post(t, srv.URL+"/api/runs/r1/ack", `{"id":"`+it["id"]+`"}`); code != 200 || !strings.Contains(body, it["id"]+" acknowledged") {
		t.Fatalf("ack: %d %s", code, body)
	}
	if got := inbox(); len(got) != 0 {
		t.Errorf("inbox after the ack: %v", got)
	}
	if code, body := post(t, srv.URL+"/api/runs/r1/ack", `{"id":"`+it["id"]+`"}`); code != 200 || !strings.Contains(body, "already acknowledged by person (orch serve)") {
		t.Errorf("a second ack: %d %s", code, body)
	}
}

// TestServeAnswerChecksOptions: the web inbox and the API answer a question
// with options as orch answer does: an answer that names no option is
// refused at once (409) with the options listed, nothing is queued for the
// run's owner and the question stays open.
func TestServeAnswerChecksOptions(t *testing.T) {
	srv, w := serveFixture(t, "")
	appendEvents(t, w,
		`{"run_id":"live","type":"run/started","data":{"cuelist":"l","cues":[{"id":"A","agents":["a"]}],`+liveOwner()+`}}`,
		`{"run_id":"live","type":"question/asked","cue":"A","agent":"a","attempt":1,"data":{"id":"q1","question":"a asks permission for edit","complexity":"quick","to":"person",`+
			`"options":[{"id":"approved","name":"Yes, proceed","kind":"allow_once"},{"id":"abort","name":"No","kind":"reject_once"}]}}`,
	)
	code, body := post(t, srv.URL+"/api/runs/live/answer", `{"question":"q1","answer":"maybe"}`)
	if code != 409 || !strings.Contains(body, `the answer \"maybe\" names none of the options`) ||
		!strings.Contains(body, `1) Yes, proceed (id approved)`) || !strings.Contains(body, `2) No (id abort)`) {
		t.Errorf("POST a bad answer: %d %s", code, body)
	}
	code, body = post(t, srv.URL+"/api/runs/live/answer", `{"question":"q1","answer":"a"}`)
	if code != 409 || !strings.Contains(body, `could be any of options 1 (Yes, proceed), 2 (No)`) {
		t.Errorf("POST an ambiguous answer: %d %s", code, body)
	}
	ctx := context.Background()
	if cmds, err := w.Commands(ctx, "live"); err != nil || len(cmds) != 0 {
		t.Errorf("a refused answer was queued for the owner: %+v %v", cmds, err)
	}
	if q, err := w.Question(ctx, "live", "q1"); err != nil || q.State != store.QuestionOpen {
		t.Errorf("q1 is %q (%v), want open", q.State, err)
	}
}
